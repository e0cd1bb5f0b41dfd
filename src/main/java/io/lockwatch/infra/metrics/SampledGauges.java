package io.lockwatch.infra.metrics;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.DoubleSupplier;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import org.springframework.stereotype.Component;

/**
 * Gauges whose value costs a query of the database or the broker (a count, a queue's depth): each is sampled on a
 * timer ({@code routes/metrics.camel.yaml}, every 10 s) and a scrape reads the last sample from memory. The
 * Prometheus scrape needs no token, so a scrape that queried would let anyone load PostgreSQL and the broker by
 * scraping in a loop. A sample that fails is NaN (the service it needs is away), as before its first one.
 */
@Component("sampledGauges")
public class SampledGauges {

    private final MeterRegistry meters;
    private final List<Sampled> gauges = new CopyOnWriteArrayList<>();

    public SampledGauges(MeterRegistry meters) {
        this.meters = meters;
    }

    /** A gauge of the given name, tags and description whose value {@code source} gives at each sample. */
    public void register(String name, Tags tags, String description, DoubleSupplier source) {
        Sampled sampled = new Sampled(source);
        Gauge.builder(name, sampled, s -> s.value).tags(tags).description(description).register(meters);
        gauges.add(sampled);
    }

    /** Takes a sample of every gauge, one after the other; the timer route calls it. */
    public void sample() {
        for (Sampled g : gauges) {
            double v;
            try {
                v = g.source.getAsDouble();
            } catch (RuntimeException e) {
                v = Double.NaN;
            }
            g.value = v;
        }
    }

    private static final class Sampled {
        final DoubleSupplier source;
        volatile double value = Double.NaN;

        Sampled(DoubleSupplier source) {
            this.source = source;
        }
    }
}
