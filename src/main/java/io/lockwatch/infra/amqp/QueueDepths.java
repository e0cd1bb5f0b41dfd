package io.lockwatch.infra.amqp;

import java.util.List;
import java.util.Properties;

import io.lockwatch.infra.metrics.SampledGauges;
import io.micrometer.core.instrument.Tags;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.stereotype.Component;

/**
 * The backlog of each of lockwatch's queues, as the gauge {@code lockwatch.queue.messages} (tags: queue, and kind:
 * readings, history or invalid), asked of the broker at each sample (SampledGauges, never at a scrape), NaN while
 * the broker is away.
 * Every instance reports the same queues: a dashboard takes the max per queue. The flows name their queues
 * ({@link WatchedQueues}).
 */
@Component
class QueueDepths {

    QueueDepths(List<WatchedQueues> watched, AmqpAdmin amqp, SampledGauges sampled) {
        for (WatchedQueues queues : watched) {
            for (WatchedQueues.Queue q : queues.queues()) {
                sampled.register("lockwatch.queue.messages", Tags.of("queue", q.name(), "kind", q.kind()),
                        "messages waiting in the queue, as the broker counts them", () -> depth(amqp, q.name()));
            }
        }
    }

    private static double depth(AmqpAdmin amqp, String queue) {
        try {
            Properties p = amqp.getQueueProperties(queue);
            Object count = p == null ? null : p.get(RabbitAdmin.QUEUE_MESSAGE_COUNT);
            return count == null ? Double.NaN : ((Number) count).doubleValue();
        } catch (RuntimeException e) {
            return Double.NaN;
        }
    }
}
