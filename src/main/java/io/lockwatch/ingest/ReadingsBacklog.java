package io.lockwatch.ingest;

import java.util.Properties;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.rabbit.core.RabbitAdmin;

/**
 * How many readings wait in the broker, over every readings queue. The scans that judge a sensor by the time of its
 * last reading (the heartbeat, the open-door alarm) wait while this is large: readings still queued must count
 * before a sensor is judged silent or a door still open.
 */
public final class ReadingsBacklog {

    private static final Logger log = LoggerFactory.getLogger(ReadingsBacklog.class);

    private final AmqpAdmin amqp;
    private final IngestProperties ingest;

    ReadingsBacklog(AmqpAdmin amqp, IngestProperties ingest) {
        this.amqp = amqp;
        this.ingest = ingest;
    }

    /** @return the messages waiting; null if the broker does not say; {@link Long#MAX_VALUE} if it is away */
    public Long messages() {
        try {
            Long total = null;
            for (String name : IngestPartitions.readingQueues(ingest)) {
                Properties queue = amqp.getQueueProperties(name);
                Object count = queue == null ? null : queue.get(RabbitAdmin.QUEUE_MESSAGE_COUNT);
                if (count != null) {
                    total = (total == null ? 0 : total) + ((Number) count).longValue();
                }
            }
            return total;
        } catch (RuntimeException e) {
            // the broker is away: ingest is not moving either, so no sensor's last reading can be trusted
            log.warn("Readings queue depth unknown ({})", e.toString());
            return Long.MAX_VALUE;
        }
    }
}
