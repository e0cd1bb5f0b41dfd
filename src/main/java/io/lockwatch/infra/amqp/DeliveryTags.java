package io.lockwatch.infra.amqp;

import java.io.IOException;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

import com.rabbitmq.client.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deliveries of a batch consumed with manual acknowledgement: per channel the highest delivery tag, so one
 * multiple-ack per channel settles the batch. Batches must be acknowledged in the order they were consumed
 * (one batch thread does that), or a multiple-ack could cover a later batch's uncommitted deliveries.
 */
public final class DeliveryTags {

    private static final Logger log = LoggerFactory.getLogger(DeliveryTags.class);

    private final Map<Channel, Long> lastTagByChannel = new IdentityHashMap<>();

    public void add(Channel channel, Long deliveryTag) {
        if (channel != null && deliveryTag != null) {
            lastTagByChannel.merge(channel, deliveryTag, Math::max);
        }
    }

    /** Per channel, the highest delivery tag of the batch. */
    public Map<Channel, Long> lastTags() {
        return java.util.Collections.unmodifiableMap(lastTagByChannel);
    }

    public Set<Channel> channels() {
        return lastTagByChannel.keySet();
    }

    /** Every channel is closed: the broker has already put the deliveries back. */
    public boolean abandoned() {
        return !lastTagByChannel.isEmpty() && lastTagByChannel.keySet().stream().noneMatch(Channel::isOpen);
    }

    public void acknowledge() {
        for (Map.Entry<Channel, Long> e : lastTagByChannel.entrySet()) {
            try {
                e.getKey().basicAck(e.getValue(), true);
            } catch (IOException | RuntimeException ex) {
                // the channel closed since: the broker redelivers, and applying twice changes nothing
                log.info("Could not acknowledge a batch on a closed channel ({}); it will be redelivered", ex.toString());
            }
        }
    }
}
