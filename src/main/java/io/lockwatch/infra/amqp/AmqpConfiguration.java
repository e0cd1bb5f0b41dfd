package io.lockwatch.infra.amqp;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.env.Profiles;

@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(AmqpProperties.class)
class AmqpConfiguration {

    @Bean
    QueueTypes queueTypes(AmqpProperties props, Environment env) {
        boolean embedded = env.acceptsProfiles(Profiles.of("embedded"));
        QueueTypes.Type type = props.queueType() != null ? props.queueType()
                : embedded ? QueueTypes.Type.CLASSIC : QueueTypes.Type.QUORUM;
        if (embedded && type != QueueTypes.Type.CLASSIC) {
            throw new QueueMismatchException("lockwatch.amqp.queue-type=" + type.name().toLowerCase()
                    + " needs RabbitMQ; the embedded broker takes classic queues only", false);
        }
        return new QueueTypes(type);
    }

    /**
     * Declares the service's queues before anything consumes or publishes, so that one RabbitMQ holds under another
     * type (or other arguments) stops the start with one line, instead of every consumer failing over and over.
     */
    @Bean
    org.springframework.beans.factory.SmartInitializingSingleton queuesDeclaredAsConfigured(
            ObjectProvider<org.springframework.amqp.rabbit.connection.ConnectionFactory> rabbit, QueueTypes types,
            org.springframework.context.ApplicationContext context) {
        return () -> rabbit.ifAvailable(cf -> QueueMismatchException.declareOrRefuse(cf, context, types));
    }
}
