package io.lockwatch.testing;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * Publishes readings the way one sensor gateway would: on one channel, so the broker keeps their order.
 * (Separate sends may take separate channels from the cache, and the broker orders only within a channel.)
 */
public final class Readings {

    private Readings() {
    }

    public static Message json(String routingKey, String body, String messageId) {
        MessageProperties p = new MessageProperties();
        p.setContentType("application/json");
        p.setReceivedRoutingKey(routingKey);
        if (messageId != null) {
            p.setMessageId(messageId);
        }
        return new Message(body.getBytes(StandardCharsets.UTF_8), p);
    }

    public static Message reading(String sensor, int data, long ts) {
        return reading(sensor, data, ts, "");
    }

    /** @param more further fields of the reading, each after a comma: {@code ,"battery":80} */
    public static Message reading(String sensor, int data, long ts, String more) {
        return json(sensor, "{\"sensor_id\":\"" + sensor + "\",\"data\":" + data + ",\"ts\":" + ts + more + "}", null);
    }

    public static void publishInOrder(RabbitTemplate rabbit, String exchange, List<Message> messages) {
        rabbit.invoke(ops -> {
            for (Message m : messages) {
                ops.send(exchange, m.getMessageProperties().getReceivedRoutingKey(), m);
            }
            return null;
        });
    }
}
