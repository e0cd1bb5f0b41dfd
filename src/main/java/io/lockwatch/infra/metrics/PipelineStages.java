package io.lockwatch.infra.metrics;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * The latency of each stage between a reading's arrival and its webhook's answer, from this instance's own clock:
 * {@code lockwatch_pipeline_stage_seconds{stage=…}}, as histograms, so that a benchmark (scripts/bench.sh) and an
 * operator's dashboard read where a notification's time went. The stages, in order:
 * <ul>
 * <li>{@code consumed_to_committed}: a batch's first reading consumed from the broker to the batch committed;</li>
 * <li>{@code committed_to_claimed}: the oldest commit a claim takes up to that claim's end;</li>
 * <li>{@code claimed_to_sent}: a request claimed to its POST starting;</li>
 * <li>{@code sent_to_answered}: the POST to its answer.</li>
 * </ul>
 */
public final class PipelineStages {

    public static final String NAME = "lockwatch.pipeline.stage";

    private PipelineStages() {
    }

    public static Timer timer(MeterRegistry meters, String stage) {
        return Timer.builder(NAME).tag("stage", stage)
                .description("latency of one stage of a reading's way to its webhook's answer")
                .publishPercentileHistogram().register(meters);
    }
}
