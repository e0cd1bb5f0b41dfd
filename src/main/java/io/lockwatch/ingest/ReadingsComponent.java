package io.lockwatch.ingest;

import java.util.Map;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Envelope;
import org.apache.camel.Consumer;
import org.apache.camel.Endpoint;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.apache.camel.Producer;
import org.apache.camel.support.DefaultComponent;
import org.apache.camel.support.DefaultConsumer;
import org.apache.camel.support.DefaultEndpoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.core.AcknowledgeMode;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.api.ChannelAwareMessageListener;
import org.springframework.amqp.rabbit.support.MessagePropertiesConverter;

/**
 * The readings queue as a Camel endpoint, {@code readings:<queue>?consumers=&prefetch=}: its route receives one
 * exchange per closed batch, on the one batch thread, in the order batches close.
 *
 * <p>Each message is parsed on its consumer's thread and joins the open batch ({@link IngestBatches}) without an
 * exchange of its own. Camel's spring-rabbitmq consumer made one per message (an exchange, its unit of work and
 * header map, the bean bindings of two steps), and Spring AMQP copied every property and header of each: in the
 * drain's profile that was about two thirds of the consumer thread's time, for work no reading needs.
 *
 * <p>Acknowledgement is manual and per batch ({@link IngestSteps#acknowledge}); a message the consumer holds when it
 * stops is redelivered by the broker. With partitions the container starts with no queue and {@link IngestPartitions}
 * gives it this instance's share.
 */
final class ReadingsComponent extends DefaultComponent {

    private final ConnectionFactory rabbit;
    private final IngestSteps steps;
    private final IngestBatches batches;
    private final IngestPartitions partitions;

    ReadingsComponent(ConnectionFactory rabbit, IngestSteps steps, IngestBatches batches, IngestPartitions partitions) {
        this.rabbit = rabbit;
        this.steps = steps;
        this.batches = batches;
        this.partitions = partitions;
    }

    @Override
    protected Endpoint createEndpoint(String uri, String remaining, Map<String, Object> parameters) throws Exception {
        int consumers = getAndRemoveParameter(parameters, "consumers", Integer.class, 1);
        int prefetch = getAndRemoveParameter(parameters, "prefetch", Integer.class, 2000);
        return new ReadingsEndpoint(uri, this, remaining, consumers, prefetch);
    }

    private static final class ReadingsEndpoint extends DefaultEndpoint {

        private final String queue;
        private final int consumers;
        private final int prefetch;

        ReadingsEndpoint(String uri, ReadingsComponent component, String queue, int consumers, int prefetch) {
            super(uri, component);
            this.queue = queue;
            this.consumers = consumers;
            this.prefetch = prefetch;
        }

        @Override
        public Producer createProducer() {
            throw new UnsupportedOperationException("readings: is consumed only; sensors publish to the exchange");
        }

        @Override
        public Consumer createConsumer(Processor processor) throws Exception {
            Consumer consumer = new ReadingsConsumer(this, processor);
            configureConsumer(consumer);
            return consumer;
        }

        @Override
        public ReadingsComponent getComponent() {
            return (ReadingsComponent) super.getComponent();
        }
    }

    private static final class ReadingsConsumer extends DefaultConsumer implements ChannelAwareMessageListener {

        private static final Logger log = LoggerFactory.getLogger(ReadingsConsumer.class);

        private final ReadingsEndpoint endpoint;
        private final IngestSteps steps;
        private final IngestBatches batches;
        private volatile DirectMessageListenerContainer container;

        ReadingsConsumer(ReadingsEndpoint endpoint, Processor processor) {
            super(endpoint, processor);
            this.endpoint = endpoint;
            this.steps = endpoint.getComponent().steps;
            this.batches = endpoint.getComponent().batches;
        }

        @Override
        protected void doStart() throws Exception {
            super.doStart();
            ReadingsComponent c = endpoint.getComponent();
            batches.deliverTo(this::process);
            DirectMessageListenerContainer listener = new DirectMessageListenerContainer(c.rabbit);
            listener.setQueueNames(endpoint.queue);
            listener.setAcknowledgeMode(AcknowledgeMode.MANUAL);
            listener.setPrefetchCount(endpoint.prefetch);
            listener.setConsumersPerQueue(endpoint.consumers);
            // the topology is declared on every connection by the service's declarables (IngestConfiguration)
            listener.setAutoDeclare(false);
            listener.setMessagePropertiesConverter(new ReadingProperties());
            listener.setMicrometerEnabled(false);
            listener.setMessageListener(this);
            if (c.partitions.enabled()) {
                c.partitions.attach(listener);
            }
            listener.afterPropertiesSet();
            listener.start();
            container = listener;
        }

        @Override
        protected void doStop() throws Exception {
            DirectMessageListenerContainer listener = container;
            container = null;
            if (listener != null) {
                // the channels close: what the open batch holds is redelivered, so it is dropped here
                listener.stop();
                listener.destroy();
            }
            batches.stopDelivering();
            super.doStop();
        }

        /** Per message, on its consumer's thread. A parser defect parks the message with its batch, never retried. */
        @Override
        public void onMessage(Message message, Channel channel) {
            Object parsed;
            try {
                parsed = steps.parse(message);
            } catch (RuntimeException e) {
                log.error("Parking a message whose parsing failed unexpectedly", e);
                parsed = steps.unreadable(message, e);
            }
            batches.add(parsed, channel, message.getMessageProperties().getDeliveryTag());
        }

        /**
         * A closed batch, on the batch thread: one exchange through the route. The route's error handling keeps a
         * failure from coming back here but when stopping; {@link IngestBatches} then logs the batch as redelivered.
         */
        private void process(IngestBatch batch) {
            Exchange exchange = createExchange(false);
            exchange.getMessage().setBody(batch);
            try {
                getProcessor().process(exchange);
            } catch (Exception e) {
                exchange.setException(e);
            }
            Exception failed = exchange.getException();
            releaseExchange(exchange, false);
            if (failed != null) {
                throw new IllegalStateException("the batch's route failed", failed);
            }
        }
    }

    /**
     * What a reading's message keeps of the AMQP properties: what ingest reads (the message id and timestamp a
     * reading may take) and what a parked message keeps of where it came from. Spring AMQP's default converts every
     * property and header of every message.
     */
    private static final class ReadingProperties implements MessagePropertiesConverter {

        @Override
        public MessageProperties toMessageProperties(AMQP.BasicProperties source, Envelope envelope, String charset) {
            MessageProperties p = new MessageProperties();
            if (source != null) {
                p.setMessageId(source.getMessageId());
                p.setTimestamp(source.getTimestamp());
                p.setContentType(source.getContentType());
                // the publisher's login: RabbitMQ refuses a publish whose user-id is not the connection's own
                p.setUserId(source.getUserId());
            }
            if (envelope != null) {
                p.setReceivedExchange(envelope.getExchange());
                p.setReceivedRoutingKey(envelope.getRoutingKey());
                p.setDeliveryTag(envelope.getDeliveryTag());
                p.setRedelivered(envelope.isRedeliver());
            }
            return p;
        }

        @Override
        public AMQP.BasicProperties fromMessageProperties(MessageProperties source, String charset) {
            throw new UnsupportedOperationException("the readings consumer does not publish");
        }
    }
}
