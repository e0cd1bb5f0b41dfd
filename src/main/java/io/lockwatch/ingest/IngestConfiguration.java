package io.lockwatch.ingest;

import io.lockwatch.infra.amqp.ConfirmedPublisher;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.amqp.core.Binding;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.Declarables;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.core.Queue;
import org.springframework.amqp.core.TopicExchange;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.amqp.support.converter.MessageConverter;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(IngestProperties.class)
public class IngestConfiguration {

    /**
     * The ingest topology, declared by the service (again on every reconnection): a durable topic exchange,
     * routing key = sensor id, a durable queue taking every key, and the durable queue of parked messages.
     * No broker-specific arguments, so that RabbitMQ and the embedded Qpid broker accept the same.
     */
    @Bean
    Declarables ingestTopology(IngestProperties props) {
        TopicExchange readings = new TopicExchange(props.exchange(), true, false);
        Queue queue = new Queue(props.queue(), true);
        Queue invalid = new Queue(props.invalidQueue(), true);
        Binding all = BindingBuilder.bind(queue).to(readings).with("#");
        return new Declarables(readings, queue, invalid, all);
    }

    @Bean
    ReadingParser readingParser(IngestProperties props) {
        return new ReadingParser(props.maxBody().toBytes(), props.maxClockSkew().toMillis(), System::currentTimeMillis);
    }

    @Bean
    SensorStateStore sensorStateStore(JdbcTemplate jdbc, TransactionTemplate tx,
                                      @org.springframework.beans.factory.annotation.Value("${lockwatch.heartbeat.timeout}") java.time.Duration timeout) {
        return new SensorStateStore(jdbc, tx, timeout);
    }

    @Bean
    IngestSteps ingest(ReadingParser parser, SensorStateStore store, ConfirmedPublisher publisher, IngestProperties props,
                       MeterRegistry meters) {
        return new IngestSteps(parser, store, publisher, props, meters);
    }

    @Bean
    ConfirmedPublisher confirmedPublisher(RabbitTemplate rabbit) {
        return new ConfirmedPublisher(rabbit);
    }

    @Bean
    IngestBatchAggregation ingestBatchAggregation() {
        return new IngestBatchAggregation();
    }

    /** The consumer hands bodies on as the bytes received, whatever their content type says. */
    @Bean
    MessageConverter rawBodyMessageConverter() {
        return new MessageConverter() {
            @Override
            public Message toMessage(Object object, MessageProperties messageProperties) {
                byte[] body = object instanceof byte[] b ? b : String.valueOf(object).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                return new Message(body, messageProperties);
            }

            @Override
            public Object fromMessage(Message message) {
                return message.getBody();
            }
        };
    }
}
