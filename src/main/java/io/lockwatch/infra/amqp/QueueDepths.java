package io.lockwatch.infra.amqp;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

import io.lockwatch.history.HistoryProperties;
import io.lockwatch.ingest.IngestPartitions;
import io.lockwatch.ingest.IngestProperties;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.stereotype.Component;

/**
 * The backlog of each of lockwatch's queues, as the gauge {@code lockwatch.queue.messages} (tags: queue, and kind:
 * readings, history or invalid), asked of the broker when the gauge is read (a scrape), NaN while the broker is away.
 * Every instance reports the same queues: a dashboard takes the max per queue.
 */
@Component
class QueueDepths {

    QueueDepths(IngestProperties ingest, HistoryProperties history, AmqpAdmin amqp, MeterRegistry meters) {
        Map<String, String> kinds = new LinkedHashMap<>();
        IngestPartitions.readingQueues(ingest).forEach(q -> kinds.put(q, "readings"));
        kinds.put(history.queue(), "history");
        kinds.put(ingest.invalidQueue(), "invalid");
        kinds.forEach((queue, kind) -> Gauge.builder("lockwatch.queue.messages", () -> depth(amqp, queue))
                .tags("queue", queue, "kind", kind)
                .description("messages waiting in the queue, as the broker counts them")
                .register(meters));
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
