package io.lockwatch.ingest;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import com.rabbitmq.client.Channel;

/**
 * The readings and rejections of one batch, in delivery order, and for each channel they came on the
 * highest delivery tag, so that one multiple-ack per channel settles the whole batch once it is committed.
 */
public final class IngestBatch {

    private final List<Reading> readings = new ArrayList<>();
    private final List<Rejection> rejections = new ArrayList<>();
    private final Map<Channel, Long> lastTagByChannel = new IdentityHashMap<>();
    private ApplyOutcome outcome;

    void add(Object parsed, Channel channel, Long deliveryTag) {
        if (parsed instanceof Reading r) {
            readings.add(r);
        } else if (parsed instanceof Rejection r) {
            rejections.add(r);
        } else {
            throw new IllegalArgumentException("not a reading: " + parsed);
        }
        if (channel != null && deliveryTag != null) {
            lastTagByChannel.merge(channel, deliveryTag, Math::max);
        }
    }

    public List<Reading> readings() {
        return readings;
    }

    public List<Rejection> rejections() {
        return rejections;
    }

    Map<Channel, Long> lastTagByChannel() {
        return lastTagByChannel;
    }

    /** Every channel this batch came on is closed: the broker has already put its messages back. */
    boolean abandoned() {
        return !lastTagByChannel.isEmpty() && lastTagByChannel.keySet().stream().noneMatch(Channel::isOpen);
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
