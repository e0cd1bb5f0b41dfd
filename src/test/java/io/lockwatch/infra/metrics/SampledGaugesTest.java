package io.lockwatch.infra.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

/** A sampled gauge asks its source only when sampled; a read, however many, is the last sample. */
class SampledGaugesTest {

    final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    final SampledGauges sampled = new SampledGauges(meters);

    @Test
    void readsCostNothingAndShowTheLastSample() {
        AtomicInteger asked = new AtomicInteger();
        sampled.register("rows", Tags.of("table", "t"), "rows of t", () -> asked.incrementAndGet() * 10);

        assertThat(read()).isNaN(); // nothing known before the first sample
        sampled.sample();
        for (int i = 0; i < 100; i++) {
            assertThat(read()).isEqualTo(10);
        }
        sampled.sample();
        assertThat(read()).isEqualTo(20);
        assertThat(asked).hasValue(2);
    }

    @Test
    void aSampleThatFailsIsNaNAndTheOthersAreStillTaken() {
        sampled.register("away", Tags.empty(), "a source that is away", () -> {
            throw new IllegalStateException("database away");
        });
        sampled.register("here", Tags.empty(), "a source that answers", () -> 3);

        sampled.sample();

        assertThat(meters.get("away").gauge().value()).isNaN();
        assertThat(meters.get("here").gauge().value()).isEqualTo(3);
    }

    private double read() {
        return meters.get("rows").tag("table", "t").gauge().value();
    }
}
