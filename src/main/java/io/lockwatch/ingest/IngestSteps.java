package io.lockwatch.ingest;

import java.util.ArrayList;
import java.util.Date;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.time.Duration;

import io.lockwatch.infra.amqp.ConfirmedPublisher;
import io.lockwatch.infra.amqp.ConfirmedPublisher.Outgoing;
import io.lockwatch.infra.tracing.Traces;
import io.lockwatch.ingest.Rejection.Reason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.tracing.Span;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.AmqpException;
import io.lockwatch.devices.DeviceLogin;
import io.lockwatch.devices.Devices;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;

/**
 * The steps of the ingest route ({@code routes/ingest.camel.yaml}): parse each message, then per batch apply
 * the readings to PostgreSQL, park the rejected messages, and acknowledge the batch.
 *
 * <p>Failures: only what the messages themselves are (bad input, judged as they are parsed) is parked. Anything a
 * step fails on throws, and the route configurations retry the step with a growing delay, holding the batch
 * unacknowledged meanwhile: a database or broker that is away until it is back, any other failure (a fault of the
 * service) counted and logged as such ({@link IngestFaults}) until it is gone.
 */
public class IngestSteps {

    private static final Logger log = LoggerFactory.getLogger(IngestSteps.class);
    public static final String REASON_HEADER = "x-lockwatch-reason";
    public static final String DETAIL_HEADER = "x-lockwatch-detail";

    private final ReadingParser parser;
    private final SensorStateStore store;
    private final ConfirmedPublisher publisher;
    private final IngestProperties props;

    private final Counter received;
    private final io.micrometer.core.instrument.Timer consumedToCommitted;
    private final Counter unknown;
    private final Counter duplicates;
    private final Counter stale;
    private final Counter changes;
    private final Counter forwarded;
    private final Map<Reason, Counter> invalid = new EnumMap<>(Reason.class);
    private final Traces traces;
    /** One batch's parking at a time runs ahead of its apply (the batch thread waits for it before the next). */
    private final java.util.concurrent.ExecutorService parking = java.util.concurrent.Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "lockwatch-park-ahead");
        t.setDaemon(true);
        return t;
    });

    private final Devices devices;

    public IngestSteps(ReadingParser parser, SensorStateStore store, ConfirmedPublisher publisher, IngestProperties props,
                       MeterRegistry meters, Traces traces, Devices devices) {
        this.devices = devices;
        this.traces = traces;
        this.parser = parser;
        this.store = store;
        this.publisher = publisher;
        this.props = props;
        this.received = meters.counter("lockwatch.readings.received");
        this.consumedToCommitted = io.lockwatch.infra.metrics.PipelineStages.timer(meters, "consumed_to_committed");
        this.unknown = meters.counter("lockwatch.readings.unknown.sensor");
        this.duplicates = meters.counter("lockwatch.readings.duplicate");
        this.stale = meters.counter("lockwatch.readings.stale");
        this.changes = meters.counter("lockwatch.state.changes");
        this.forwarded = meters.counter("lockwatch.readings.forwarded");
        for (Reason r : Reason.values()) {
            invalid.put(r, meters.counter("lockwatch.readings.invalid", "reason", r.code()));
        }
    }

    /**
     * Per message, on its consumer's thread ({@link ReadingsComponent}): the body becomes a {@link Reading} or a
     * {@link Rejection}, or for an array of readings a list of them.
     */
    Object parse(Message message) {
        MessageProperties p = message.getMessageProperties();
        String routingKey = p.getReceivedRoutingKey();
        Object parsed = routingKey != null && routingKey.startsWith(MQTT_ROUTING_KEY_PREFIX)
                ? parser.parseMqtt(message.getBody(), routingKey.substring(MQTT_ROUTING_KEY_PREFIX.length()),
                        p.getMessageId(), p.getTimestamp(), () -> originalRouting(p))
                : parser.parseMessage(message.getBody(), p.getMessageId(), p.getTimestamp(), () -> originalRouting(p));
        DeviceLogin publisher = DeviceLogin.parse(p.getUserId());
        if (publisher == null) {
            return parsed; // the broker's own users (the service's, an operator's), and MQTT, whose plugin names none
        }
        java.util.function.Function<Reading, Rejection> refusal = r -> new Rejection(Reason.NOT_AUTHORIZED,
                "sensor " + r.sensorId() + ": published by " + publisher + ", which does not report for it",
                message.getBody(), withPublisher(p));
        if (publisher.gateway()) {
            return new IngestBatch.FromGateway(publisher.gatewayId(), parsed, refusal);
        }
        // a sensor's own login reports for that sensor alone: judged here, no registry needed
        if (parsed instanceof List<?> several) {
            return several.stream().map(one -> one instanceof Reading r && !r.sensorId().equals(publisher.sensorId())
                    ? refusal.apply(r) : one).toList();
        }
        return parsed instanceof Reading r && !r.sensorId().equals(publisher.sensorId()) ? refusal.apply(r) : parsed;
    }

    /**
     * Per batch, before it is applied: the readings a gateway published for sensors that are not its own join the
     * rejections as {@code not_authorized}. The broker's topic authorisation let the message in by its routing key;
     * what the message holds (an array names any sensors) is judged here, one query per gateway of the batch.
     */
    public void refuseWhatPublishersMayNotReport(IngestBatch batch) {
        if (batch.claims().isEmpty()) {
            return;
        }
        Map<String, List<IngestBatch.Claim>> byGateway = new LinkedHashMap<>();
        for (IngestBatch.Claim c : batch.claims()) {
            byGateway.computeIfAbsent(c.gatewayId(), g -> new ArrayList<>()).add(c);
        }
        byGateway.forEach((gateway, claims) -> {
            java.util.Set<String> own = devices.ownedAmong(DeviceLogin.ofGateway(gateway),
                    claims.stream().map(c -> c.reading().sensorId()).distinct().toList());
            for (IngestBatch.Claim c : claims) {
                if (!own.contains(c.reading().sensorId())) {
                    batch.refuse(c);
                }
            }
        });
    }

    private static Map<String, Object> withPublisher(MessageProperties p) {
        Map<String, Object> context = originalRouting(p);
        context.put("x-original-user-id", p.getUserId());
        return context;
    }

    /**
     * The routing key of a reading published over MQTT to {@code lockwatch/readings/<sensor id>}: RabbitMQ's MQTT
     * plugin (and the embedded listener's bridge, {@link MqttBridge}) turn the topic's {@code /} into {@code .}.
     */
    public static final String MQTT_ROUTING_KEY_PREFIX = "lockwatch.readings.";

    /**
     * A message whose parsing failed in a way the parser does not foresee (a defect): it becomes a
     * {@code processing_failed} rejection, parked and acknowledged with its batch like any bad message, never
     * retried into the same failure nor left unacknowledged for a later batch's multiple-ack to drop silently.
     */
    Rejection unreadable(Message message, RuntimeException cause) {
        return new Rejection(Reason.PROCESSING_FAILED, "unexpected: " + cause, message.getBody(),
                originalRouting(message.getMessageProperties()));
    }

    /** What a parked message keeps of where it came from; gathered only for a rejection. */
    private static Map<String, Object> originalRouting(MessageProperties p) {
        Map<String, Object> context = new LinkedHashMap<>();
        putIfPresent(context, "x-original-exchange", p.getReceivedExchange());
        putIfPresent(context, "x-original-routing-key", p.getReceivedRoutingKey());
        putIfPresent(context, "x-original-message-id", p.getMessageId());
        putIfPresent(context, "x-original-content-type", p.getContentType());
        return context;
    }

    /**
     * Per batch: state, events. A failure is not the readings' fault (they were judged as they were parsed): it
     * throws, and the route configuration retries the batch, unacknowledged, until it is applied. With tracing on,
     * the batch is a span from its first message, and its notifications keep that span's traceparent.
     */
    public void apply(IngestBatch batch) {
        Span span = traces.startRoot("ingest batch", Span.Kind.CONSUMER, batch.startedAtMillis());
        ApplyOutcome outcome;
        try {
            outcome = store.apply(batch.readings(), traces.traceParent(span));
        } catch (RuntimeException e) {
            Traces.end(span, e);
            throw e;
        }
        if (span != null) {
            Traces.tag(span, "lockwatch.readings", batch.readings().size());
            Traces.tag(span, "lockwatch.rejections", batch.rejections().size());
            Traces.tag(span, "lockwatch.events", outcome.events().size());
            Traces.tag(span, "lockwatch.notifications", outcome.notifications().pending());
            Traces.end(span, null);
        }
        batch.recordOutcome(outcome);
        consumedToCommitted.record(System.nanoTime() - batch.startedNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        received.increment(batch.readings().size());
        unknown.increment(outcome.unknown());
        duplicates.increment(outcome.duplicates());
        stale.increment(outcome.stale());
        changes.increment(outcome.events().stream().filter(SensorEvent::isStateChange).count());
    }

    /** Per batch: every rejection is published to the invalid queue, and confirmed, before the batch is acked. */
    public void park(IngestBatch batch) {
        if (batch.rejections().isEmpty()) {
            return;
        }
        List<Rejection> toPublish = batch.rejections();
        java.util.concurrent.Future<?> early = batch.takeEarlyParking();
        if (early != null) {
            try {
                early.get();
                // confirmed: only what apply added since is left
                toPublish = batch.rejections().subList(batch.parkedEarly(), batch.rejections().size());
            } catch (java.util.concurrent.ExecutionException e) {
                log.debug("Parking ahead failed ({}); parking the batch's rejections now", e.getCause().toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while parking", e);
            }
        }
        try {
            publish(toPublish);
        } catch (AmqpException e) {
            if (batch.deliveries().abandoned()) {
                log.info("Broker connection lost mid-batch; its {} readings will be redelivered", batch.size());
                return;
            }
            throw e;
        }
        for (Rejection r : batch.rejections()) {
            invalid.get(r.reason()).increment();
        }
        if (log.isDebugEnabled()) {
            batch.rejections().forEach(r -> log.debug("Parked a message: {} ({})", r.reason().code(), r.detail()));
        }
    }

    /**
     * Per batch, with partitions: the readings of array messages are published again one by one, routed by their
     * sensor id, and confirmed, before the batch is acked; each comes back through its sensor's partition. The
     * measured time and message id each was given travel with it, so a forwarded reading is judged as it would have
     * been here.
     */
    public void forward(IngestBatch batch) {
        if (batch.forwards().isEmpty()) {
            return;
        }
        List<Outgoing> messages = new ArrayList<>(batch.forwards().size());
        for (Reading r : batch.forwards()) {
            MessageProperties p = new MessageProperties();
            p.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
            p.setContentType("application/json");
            p.setHeader("x-lockwatch-via", "array");
            // the id as a property: the body's message_id is held to 128 characters, a derived id may be longer
            p.setMessageId(r.messageId());
            String json = "{\"sensor_id\":\"" + r.sensorId() + "\",\"data\":" + r.data() + ",\"ts\":" + r.measuredAt() + "}";
            messages.add(new Outgoing(props.exchange(), r.sensorId(),
                    new Message(json.getBytes(java.nio.charset.StandardCharsets.UTF_8), p)));
        }
        publisher.publish(messages, Duration.ofSeconds(30));
        forwarded.increment(messages.size());
    }

    /**
     * Per batch, before it is applied: its bad messages (known since parsing) start on their way to the invalid
     * queue on a thread of their own, so that waiting for the broker's confirms overlaps the database
     * transaction; {@link #park} waits for them before the batch is acked.
     */
    public void parkAhead(IngestBatch batch) {
        if (batch.rejections().isEmpty()) {
            return;
        }
        List<Rejection> known = List.copyOf(batch.rejections());
        batch.parkingEarly(parking.submit(() -> publish(known)), known.size());
    }

    private void publish(List<Rejection> rejections) {
        long limit = props.parkMaxBody().toBytes();
        publisher.publish(rejections.stream()
                .map(r -> new Outgoing("", props.invalidQueue(), toMessage(r, limit))).toList(), Duration.ofSeconds(30));
    }

    /** Per batch, after commit: one multiple-ack per channel up to the batch's last delivery tag. */
    public void acknowledge(IngestBatch batch) {
        batch.deliveries().acknowledge();
    }

    private static Message toMessage(Rejection r, long limit) {
        byte[] body = r.body() == null ? new byte[0] : r.body();
        MessageProperties p = new MessageProperties();
        p.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
        p.setHeader(REASON_HEADER, r.reason().code());
        p.setHeader(DETAIL_HEADER, r.detail());
        p.setHeader("x-lockwatch-parked-at", new Date().toInstant().toString());
        r.properties().forEach(p::setHeader);
        if (body.length > limit) {
            p.setHeader("x-lockwatch-truncated-from", body.length);
            body = java.util.Arrays.copyOf(body, (int) limit);
        }
        return new Message(body, p);
    }

    private static void putIfPresent(Map<String, Object> map, String key, Object value) {
        if (value != null) {
            map.put(key, value.toString());
        }
    }
}
