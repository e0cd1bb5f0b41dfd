package io.lockwatch.infra.amqp;

import java.time.Duration;
import java.util.List;

import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * Publishes messages on one channel (so the broker keeps their order) and returns only once the broker has
 * confirmed them all; whatever is acknowledged afterwards can rely on them being stored. Throws an
 * {@link org.springframework.amqp.AmqpException} otherwise, which the route configuration retries.
 */
public class ConfirmedPublisher {

    /** Where one message goes. */
    public record Outgoing(String exchange, String routingKey, Message message) {
    }

    private final RabbitTemplate rabbit;

    public ConfirmedPublisher(RabbitTemplate rabbit) {
        this.rabbit = rabbit;
    }

    public void publish(List<Outgoing> messages, Duration confirmWithin) {
        if (messages.isEmpty()) {
            return;
        }
        rabbit.invoke(ops -> {
            for (Outgoing m : messages) {
                ops.send(m.exchange(), m.routingKey(), m.message());
            }
            ops.waitForConfirmsOrDie(confirmWithin.toMillis());
            return null;
        });
    }
}
