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

    /**
     * The one thread that applies the closed batches, in order, while the consumer goes on parsing and gathering
     * the next (a batch closed by the completion predicate would otherwise be applied on the consumer's own
     * thread). A Camel thread pool profile, so that Camel creates and stops the pool with the route. One thread and
     * a queue that never refuses: a second thread, or a refusal that runs the batch on the caller's thread (Camel's
     * default policy), would let a later batch's multiple-ack cover an earlier, uncommitted one. In Camel 4 a max
     * queue size of 0 or -1 means no queue at all (a hand-over), so the size is given as the largest int; the
     * prefetch bounds it anyway, to a few batches. Refusals happen only once the pool is stopped, and then abort:
     * the batch stays unacknowledged and is redelivered.
     */
    @Bean
    org.apache.camel.spring.boot.CamelContextConfiguration ingestBatchThreadProfile() {
        return new org.apache.camel.spring.boot.CamelContextConfiguration() {
            @Override
            public void beforeApplicationStart(org.apache.camel.CamelContext camel) {
                camel.getExecutorServiceManager().registerThreadPoolProfile(
                        new org.apache.camel.builder.ThreadPoolProfileBuilder(BATCH_THREAD)
                                .poolSize(1).maxPoolSize(1).maxQueueSize(Integer.MAX_VALUE)
                                .allowCoreThreadTimeOut(false)
                                .rejectedPolicy(org.apache.camel.util.concurrent.ThreadPoolRejectedPolicy.Abort).build());
            }

            @Override
            public void afterApplicationStart(org.apache.camel.CamelContext camel) {
            }
        };
    }

    /** The thread pool profile of the ingest aggregator ({@code routes/ingest.camel.yaml}). */
    static final String BATCH_THREAD = "ingest-batches";

    /** When a batch closes (the aggregator's completion predicate, asked as each message joins). */
    @Bean
    org.apache.camel.Predicate ingestBatchIsComplete(IngestProperties props) {
        long interval = props.batchInterval().toMillis();
        long maxWait = props.batchMaxWait().toMillis();
        return exchange -> exchange.getMessage().getBody(IngestBatch.class)
                .isComplete(props.batchSize(), interval, props.lightBatch(), maxWait);
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
