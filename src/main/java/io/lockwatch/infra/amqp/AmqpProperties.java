package io.lockwatch.infra.amqp;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * @param queueType the type of every queue the service declares: {@code quorum} (the default on the external
 *                  profile: replicated over a RabbitMQ cluster, and safe on one node) or {@code classic} (the
 *                  embedded broker's, which takes no other)
 */
@ConfigurationProperties("lockwatch.amqp")
public record AmqpProperties(QueueTypes.Type queueType) {
}
