package io.lockwatch.infra.amqp;

import java.util.List;
import java.util.Properties;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.stereotype.Component;

/**
 * The backlog of each of lockwatch's queues, as the gauge {@code lockwatch.queue.messages} (tags: queue, and kind:
 * readings, history or invalid), asked of the broker when the gauge is read (a scrape), NaN while the broker is away.
 * Every instance reports the same queues: a dashboard takes the max per queue. The flows name their queues
 * ({@link WatchedQueues}).
 */
@Component
class QueueDepths {

    QueueDepths(List<WatchedQueues> watched, AmqpAdmin amqp, MeterRegistry meters) {
        for (WatchedQueues queues : watched) {
            for (WatchedQueues.Queue q : queues.queues()) {
                Gauge.builder("lockwatch.queue.messages", () -> depth(amqp, q.name()))
                        .tags("queue", q.name(), "kind", q.kind())
                        .description("messages waiting in the queue, as the broker counts them")
                        .register(meters);
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
