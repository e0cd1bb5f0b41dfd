package io.lockwatch.infra.amqp;

import java.util.List;

/**
 * Queues whose backlog is reported ({@link QueueDepths}): each flow names its own with a bean of this type, so that
 * the gauge knows no flow.
 */
@FunctionalInterface
public interface WatchedQueues {

    /** A queue and its kind, the gauge's tags: readings, history, invalid. */
    record Queue(String name, String kind) {
    }

    List<Queue> queues();
}
