package io.lockwatch.ingest;

import java.util.ArrayList;
import java.util.List;

import io.lockwatch.infra.amqp.ConfirmedPublisher;
import io.lockwatch.infra.amqp.QueueTypes;
import io.lockwatch.infra.amqp.WatchedQueues;
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
@EnableConfigurationProperties({IngestProperties.class, MqttProperties.class})
class IngestConfiguration {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(IngestConfiguration.class);

    /**
     * The ingest topology, declared by the service (again on every reconnection): a durable topic exchange that
     * sensors publish to with their id as routing key, and the durable queue of parked messages. Every queue is of
     * {@code lockwatch.amqp.queue-type} (quorum on RabbitMQ by default, classic on the embedded broker). Then either
     * <ul>
     * <li>one durable queue taking every key (the default, {@code partitions} 1); one instance consumes it in
     * order; or</li>
     * <li>({@code partitions} N &gt; 1, RabbitMQ only) a consistent-hash exchange bound to the topic exchange,
     * hashing the routing key onto N durable single-active-consumer queues, so that each sensor's readings stay in
     * one queue, consumed in order by one instance at a time ({@link IngestPartitions}).</li>
     * </ul>
     * On RabbitMQ, readings published over MQTT ({@code lockwatch/readings/<sensor id>}) reach the readings exchange
     * through a binding from the exchange its MQTT plugin publishes to, for {@code lockwatch.readings.#}: every
     * level, so that a topic naming no sensor is parked with its reason rather than dropped by the broker.
     */
    @Bean
    Declarables ingestTopology(IngestProperties props, MqttProperties mqtt, QueueTypes types) {
        TopicExchange readings = new TopicExchange(props.exchange(), true, false);
        Queue invalid = types.durable(props.invalidQueue());
        java.util.List<org.springframework.amqp.core.Declarable> declarables = new java.util.ArrayList<>();
        declarables.add(readings);
        declarables.add(invalid);
        if (mqtt.enabled() && mqtt.topicExchange() != null && !mqtt.topicExchange().isBlank()) {
            // the plugin's exchange exists already (amq.topic) or is the operator's: bound to, never declared
            declarables.add(new Binding(props.exchange(), Binding.DestinationType.EXCHANGE, mqtt.topicExchange(),
                    IngestSteps.MQTT_ROUTING_KEY_PREFIX + "#", null));
        }
        if (props.partitions() <= 1) {
            Queue queue = types.durable(props.queue());
            declarables.add(queue);
            declarables.add(BindingBuilder.bind(queue).to(readings).with("#"));
            return new Declarables(declarables);
        }
        org.springframework.amqp.core.CustomExchange hash = new org.springframework.amqp.core.CustomExchange(
                IngestPartitions.hashExchangeOf(props), "x-consistent-hash", true, false);
        declarables.add(hash);
        declarables.add(BindingBuilder.bind(hash).to(readings).with("#"));
        for (String name : IngestPartitions.readingQueues(props)) {
            Queue queue = types.singleActiveConsumer(name);
            declarables.add(queue);
            // the binding key of a consistent-hash exchange is the queue's weight
            declarables.add(BindingBuilder.bind(queue).to(hash).with("1").noargs());
        }
        return new Declarables(declarables);
    }

    @Bean(destroyMethod = "leave")
    IngestPartitions ingestPartitions(JdbcTemplate jdbc, IngestProperties props, SensorStateStore store,
                                      org.springframework.core.env.Environment env, MeterRegistry meters,
                                      @org.springframework.beans.factory.annotation.Value("${lockwatch.pipeline.enabled:true}") boolean pipeline) {
        if (props.partitions() > 1 && env.acceptsProfiles(org.springframework.core.env.Profiles.of("embedded"))) {
            throw new IllegalStateException("lockwatch.ingest.partitions=" + props.partitions() + " needs RabbitMQ "
                    + "(its consistent-hash exchange and single-active-consumer queues); the embedded broker takes 1");
        }
        if (props.partitions() < 1) {
            throw new IllegalStateException("lockwatch.ingest.partitions must be 1 or more, not " + props.partitions());
        }
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            host = "unknown-host";
        }
        String id = host + "/" + ProcessHandle.current().pid() + "/" + java.util.UUID.randomUUID().toString().substring(0, 8);
        // the instance that gave partitions away may still commit its last batch of them: until its membership has
        // surely lapsed, every reading is written, so that a conflict with it is seen
        IngestPartitions partitions = new IngestPartitions(jdbc, props, id, () -> store.forget(props.memberTimeout()));
        if (pipeline) {
            partitions.refuseIncompatibleInstances();
        } else {
            partitions.refuseAnotherPartitionCount();
            log.info("Instance {} serves the API only (lockwatch.pipeline.enabled=false): it consumes no reading, posts "
                    + "no webhook, writes no history and runs no scan; the instances with the pipeline do", id);
        }
        meters.gauge("lockwatch.ingest.partitions.owned", partitions, p -> p.owned().size());
        return partitions;
    }

    /**
     * After a change of {@code partitions}, the binding of the other layout would go on copying every reading
     * into queues nobody consumes: it is removed at start (a no-op when it is not there).
     */
    @Bean
    org.springframework.boot.ApplicationRunner ingestTopologyTidied(IngestProperties props, RabbitTemplate rabbit) {
        return args -> {
            if (props.partitions() > 1) {
                IngestPartitions.unbindIfPresent(rabbit, props.queue(), false, props.exchange());
            } else {
                IngestPartitions.unbindIfPresent(rabbit, IngestPartitions.hashExchangeOf(props), true, props.exchange());
            }
        };
    }

    /** Ingest's queues, whose backlog is reported: the readings queue (or its partitions) and the invalid queue. */
    @Bean
    WatchedQueues ingestQueues(IngestProperties props) {
        return () -> {
            List<WatchedQueues.Queue> queues = new ArrayList<>();
            IngestPartitions.readingQueues(props).forEach(q -> queues.add(new WatchedQueues.Queue(q, "readings")));
            queues.add(new WatchedQueues.Queue(props.invalidQueue(), "invalid"));
            return queues;
        };
    }

    /** The readings queue's consumer, {@code readings:} in routes/ingest.camel.yaml (Camel finds it by name). */
    @Bean("readings")
    org.apache.camel.Component readingsComponent(org.springframework.amqp.rabbit.connection.ConnectionFactory rabbit,
                                                 IngestSteps ingest, IngestBatches batches, IngestPartitions partitions) {
        return new ReadingsComponent(rabbit, ingest, batches, partitions);
    }

    /** The readings still queued, which the scans wait on before judging a sensor by its last reading. */
    @Bean
    ReadingsBacklog readingsBacklog(org.springframework.amqp.core.AmqpAdmin amqp, IngestProperties props) {
        return new ReadingsBacklog(amqp, props);
    }

    @Bean
    ReadingParser readingParser(IngestProperties props) {
        return new ReadingParser(props.maxBody().toBytes(), props.maxArrayBody().toBytes(), props.maxClockSkew().toMillis(),
                System::currentTimeMillis);
    }

    @Bean
    SensorStateStore sensorStateStore(JdbcTemplate jdbc, TransactionTemplate tx, IngestProperties props,
                                      @org.springframework.beans.factory.annotation.Value("${lockwatch.heartbeat.timeout}") java.time.Duration timeout,
                                      @org.springframework.beans.factory.annotation.Value("${lockwatch.alarms.open-after:#{null}}") java.time.Duration openAfter,
                                      MeterRegistry meters) {
        // a repeat is written once its stored deadline is 10 s away: far more than this machine's clock and the
        // database's may differ by, and the deadline of a sensor that reports is an hour away
        SensorStateStore store = new SensorStateStore(jdbc, tx, timeout, openAfter, props.heldSensors(), java.time.Duration.ofSeconds(10),
                System::currentTimeMillis);
        meters.gauge("lockwatch.ingest.sensors.held", store, SensorStateStore::heldSensors);
        return store;
    }

    @Bean
    IngestSteps ingest(ReadingParser parser, SensorStateStore store, ConfirmedPublisher publisher, IngestProperties props,
                       MeterRegistry meters, io.lockwatch.infra.tracing.Traces traces, io.lockwatch.devices.Devices devices) {
        return new IngestSteps(parser, store, publisher, props, meters, traces, devices);
    }

    /** Counts and logs each failure of an ingest step that is a fault (routes/ingest.camel.yaml). */
    @Bean
    IngestFaults ingestFaults(MeterRegistry meters) {
        return new IngestFaults(meters);
    }

    @Bean
    ConfirmedPublisher confirmedPublisher(RabbitTemplate rabbit) {
        return new ConfirmedPublisher(rabbit);
    }

    /**
     * The embedded default's MQTT listener into the readings exchange (routes/mqtt.camel.yaml), started as Camel
     * starts, so that the service is ready only once the bridge takes the listener's readings.
     */
    @Bean
    MqttBridge mqttBridge(ConfirmedPublisher publisher, IngestProperties props, MqttProperties mqtt,
                          org.apache.camel.CamelContext camel) throws Exception {
        MqttBridge bridge = new MqttBridge(publisher, props.exchange());
        if (mqtt.bridge()) {
            camel.addStartupListener(bridge.startedWithCamel());
        }
        return bridge;
    }

    @Bean
    IngestBatches ingestBatches(IngestProperties props, SensorStateStore store) {
        return new IngestBatches(props, props.partitions() > 1, store::mayChangeState);
    }

    /** Starts the batch thread with the Camel context, before the routes that use it. */
    @Bean
    org.apache.camel.spring.boot.CamelContextConfiguration ingestBatchThreadStart(IngestBatches batches) {
        return new org.apache.camel.spring.boot.CamelContextConfiguration() {
            @Override
            public void beforeApplicationStart(org.apache.camel.CamelContext camel) {
                batches.start(camel);
            }

            @Override
            public void afterApplicationStart(org.apache.camel.CamelContext camel) {
            }
        };
    }

    /** The history consumer hands bodies on as the bytes received, whatever their content type says. */
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
