package io.lockwatch.ingest;

import java.util.ArrayList;
import java.util.List;

import com.rabbitmq.client.Channel;
import io.lockwatch.infra.amqp.DeliveryTags;

/**
 * The readings and rejections of one batch, in delivery order, and the deliveries to acknowledge once it is
 * committed.
 */
public final class IngestBatch {

    private final List<Reading> readings = new ArrayList<>();
    private final List<Rejection> rejections = new ArrayList<>();
    private final DeliveryTags deliveries = new DeliveryTags();
    /** The parking of the rejections known before apply, under way while the batch is applied; or null. */
    private java.util.concurrent.Future<?> earlyParking;
    private int parkedEarly;
    private ApplyOutcome outcome;
    private final long startedNanos = System.nanoTime();

    /**
     * Whether the batch closes now (asked by the aggregator as each message joins): at full size; once it is
     * {@code maxWaitMillis} old; or, while it is still light, once it is {@code intervalMillis} old. A batch that
     * stops growing is closed by the aggregator's inactivity timeout instead.
     */
    boolean isComplete(int size, long intervalMillis, int light, long maxWaitMillis) {
        int n = size();
        long age = System.nanoTime() - startedNanos;
        return n >= size || age >= maxWaitMillis * 1_000_000L || n < light && age >= intervalMillis * 1_000_000L;
    }

    void add(Object parsed, Channel channel, Long deliveryTag) {
        if (parsed instanceof Reading r) {
            readings.add(r);
        } else if (parsed instanceof Rejection r) {
            rejections.add(r);
        } else {
            throw new IllegalArgumentException("not a reading: " + parsed);
        }
        deliveries.add(channel, deliveryTag);
    }

    public List<Reading> readings() {
        return readings;
    }

    public List<Rejection> rejections() {
        return rejections;
    }

    void parkingEarly(java.util.concurrent.Future<?> parking, int rejections) {
        this.earlyParking = parking;
        this.parkedEarly = rejections;
    }

    /** The early parking under way (taken: a retried park step publishes everything itself), or null. */
    java.util.concurrent.Future<?> takeEarlyParking() {
        java.util.concurrent.Future<?> f = earlyParking;
        earlyParking = null;
        return f;
    }

    int parkedEarly() {
        return parkedEarly;
    }

    public DeliveryTags deliveries() {
        return deliveries;
    }

    /** What applying the batch did; null until it is applied. */
    public ApplyOutcome outcome() {
        return outcome;
    }

    void recordOutcome(ApplyOutcome outcome) {
        this.outcome = outcome;
    }

    public int size() {
        return readings.size() + rejections.size();
    }
}
