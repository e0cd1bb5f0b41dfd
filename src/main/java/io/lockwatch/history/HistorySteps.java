package io.lockwatch.history;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import com.rabbitmq.client.Channel;
import io.lockwatch.history.HistoryRecords.ReadingRecord;
import io.lockwatch.infra.amqp.ConfirmedPublisher;
import io.lockwatch.infra.amqp.ConfirmedPublisher.Outgoing;
import io.lockwatch.ingest.IngestBatch;
import io.lockwatch.ingest.Reading;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.AggregationStrategy;
import org.apache.camel.Exchange;
import org.apache.camel.component.springrabbit.SpringRabbitMQConstants;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageDeliveryMode;
import org.springframework.amqp.core.MessageProperties;

/**
 * The steps of the history flow ({@code routes/history.camel.yaml}). Ingest hands each applied batch's readings
 * to a durable queue, in parts of {@value #RECORDS_PER_MESSAGE} ({@link HandoverCodec}), confirmed before the batch
 * is acked; the history route gathers them
 * into inserts (Camel's Aggregator, by size and time) and acks only after the store accepted the insert. So
 * history never holds up ingest, and a store that is away only lets the queue grow until it is back.
 */
public class HistorySteps implements AggregationStrategy {

    private final HistoryStore store;
    private final ConfirmedPublisher publisher;
    private final HistoryProperties props;
    private final Counter written;
    private final io.micrometer.core.instrument.DistributionSummary insertSizes;
    private final AtomicLong newestWrittenReceivedAt = new AtomicLong(System.currentTimeMillis());

    public HistorySteps(HistoryStore store, ConfirmedPublisher publisher, HistoryProperties props, MeterRegistry meters) {
        this.store = store;
        this.publisher = publisher;
        this.props = props;
        this.written = meters.counter("lockwatch.history.readings.written");
        this.insertSizes = io.micrometer.core.instrument.DistributionSummary.builder("lockwatch.history.insert.size")
                .description("readings per history insert").register(meters);
        meters.gauge("lockwatch.history.lag.seconds", newestWrittenReceivedAt,
                t -> Math.max(0, System.currentTimeMillis() - t.get()) / 1000.0);
    }

    /** In the ingest route, after the batch is committed: its readings, in durable messages of at most {@value #RECORDS_PER_MESSAGE}. */
    public void handOver(IngestBatch batch) {
        if (batch.readings().isEmpty()) {
            return;
        }
        List<ReadingRecord> records = new ArrayList<>(batch.readings().size());
        for (Reading r : batch.readings()) {
            boolean registered = batch.outcome() != null && batch.outcome().registered().contains(r.sensorId());
            records.add(new ReadingRecord(readingId(r), r.sensorId(), r.data(), r.measuredAt(), r.receivedAt(),
                    r.timeSource().name().toLowerCase(java.util.Locale.ROOT), registered, r.messageId()));
        }
        // in parts that stay well under the broker's max_message_size (128 KiB): a record is at most ~350 bytes
        List<Outgoing> parts = new ArrayList<>();
        for (int from = 0; from < records.size(); from += RECORDS_PER_MESSAGE) {
            MessageProperties p = new MessageProperties();
            p.setDeliveryMode(MessageDeliveryMode.PERSISTENT);
            p.setContentType(HandoverCodec.CONTENT_TYPE);
            List<ReadingRecord> part = records.subList(from, Math.min(records.size(), from + RECORDS_PER_MESSAGE));
            parts.add(new Outgoing("", props.queue(), new Message(HandoverCodec.encode(part), p)));
        }
        publisher.publish(parts, Duration.ofSeconds(30));
    }

    static final int RECORDS_PER_MESSAGE = 250;

    /**
     * The same reading gets the same id on every delivery: its message id, else its sensor, measured time and
     * value when the time is its own; a reading with neither (receipt time, no id) cannot be recognised.
     */
    static String readingId(Reading r) {
        if (r.messageId() != null) {
            return r.sensorId() + "/" + r.messageId();
        }
        if (r.timeSource() != Reading.TimeSource.RECEIPT) {
            return r.sensorId() + "@" + r.measuredAt() + "=" + r.data();
        }
        return r.sensorId() + "#" + UUID.randomUUID();
    }

    /** Aggregation of history messages into a {@link HistoryBatch}. */
    @Override
    public Exchange aggregate(Exchange batchExchange, Exchange next) {
        byte[] body = next.getMessage().getBody(byte[].class);
        Channel channel = next.getProperty(SpringRabbitMQConstants.CHANNEL, Channel.class);
        Long tag = next.getMessage().getHeader(SpringRabbitMQConstants.DELIVERY_TAG, Long.class);
        Exchange target = batchExchange;
        if (target == null) {
            target = next;
            target.getMessage().setBody(new HistoryBatch());
        }
        HistoryBatch batch = target.getMessage().getBody(HistoryBatch.class);
        try {
            batch.readings().addAll(HandoverCodec.decode(body));
        } catch (IOException e) {
            // written by ingest itself; unreadable means a defect: leave it to the route configuration
            throw new IllegalStateException("unreadable history message", e);
        }
        batch.deliveries().add(channel, tag);
        return target;
    }

    /** The gathered readings in one insert; they are acked only once it is accepted (the next step). */
    public void write(HistoryBatch batch) {
        store.writeReadings(batch.readings());
        written.increment(batch.size());
        insertSizes.record(batch.size());
        batch.readings().stream().mapToLong(ReadingRecord::receivedAt).max()
                .ifPresent(t -> newestWrittenReceivedAt.accumulateAndGet(t, Math::max));
    }

    public void acknowledge(HistoryBatch batch) {
        batch.deliveries().acknowledge();
    }
}
