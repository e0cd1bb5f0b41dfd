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
    private ApplyOutcome outcome;

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
