package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.rabbitmq.client.Channel;
import org.springframework.amqp.rabbit.connection.ChannelProxy;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.AdviceWith;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.apache.camel.test.spring.junit5.UseAdviceWith;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The ingest route end to end on the embedded broker and database: readings published to the exchange, state
 * and events read back from PostgreSQL, rejections read back from the invalid queue. The route is advised to
 * count what it acknowledges, so each test waits for exactly its messages.
 */
@CamelSpringBootTest
// a context of its own: the route is advised before Camel starts, which a cached context shared with
// another test class would not allow
@SpringBootTest(properties = "lockwatch.test.context=ingest-advised")
@UseAdviceWith
class IngestRouteTest {

    /** Its consumer gathers the batches; its steps apply them. */
    static final String APPLY_ROUTE = "readings-are-consumed-from-rabbitmq";
    static final String FINISHING_ROUTE = "committed-batches-are-finished";
    static final long T0 = System.currentTimeMillis() - 600_000; // well inside the 1 h heartbeat timeout

    /**
     * A defect in parsing, on demand: an exception the parser does not foresee, of a kind that elsewhere means
     * "the database is away" and is retried.
     */
    @org.springframework.boot.test.context.TestConfiguration
    static class DefectiveParser {
        @org.springframework.context.annotation.Bean
        @org.springframework.context.annotation.Primary
        ReadingParser defectiveReadingParser(IngestProperties props) {
            return new ReadingParser(props.maxBody().toBytes(), props.maxArrayBody().toBytes(),
                    props.maxClockSkew().toMillis(), System::currentTimeMillis) {
                @Override
                public Object parseMessage(byte[] body, String amqpMessageId, java.util.Date amqpTimestamp,
                                           java.util.function.Supplier<Map<String, Object>> context) {
                    parseAttempts.incrementAndGet();
                    if (new String(body, StandardCharsets.UTF_8).contains("\"explode\"")) {
                        throw new org.springframework.dao.TransientDataAccessResourceException("parser defect (test)");
                    }
                    return super.parseMessage(body, amqpMessageId, amqpTimestamp, context);
                }
            };
        }
    }

    @Autowired CamelContext camel;
    @Autowired IngestBatches batches;
    @Autowired RabbitTemplate rabbit;
    @Autowired AmqpAdmin amqpAdmin;
    @Autowired JdbcTemplate jdbc;
    @Autowired MeterRegistry meters;
    @Autowired io.lockwatch.infra.metrics.SampledGauges sampledGauges;
    @Autowired IngestProperties props;
    @Autowired IngestSteps steps;
    @Autowired io.lockwatch.devices.Devices devices;

    static final AtomicInteger acknowledged = new AtomicInteger();
    static final AtomicBoolean crashBeforeNextAck = new AtomicBoolean();
    static final AtomicInteger databaseAwayFor = new AtomicInteger();
    static final AtomicInteger defectsInNextApplies = new AtomicInteger();
    static final AtomicInteger parseAttempts = new AtomicInteger();
    /** Per acknowledged batch: the thread that acked it and its highest delivery tag per channel number. */
    static final List<String> ackThreads = java.util.Collections.synchronizedList(new ArrayList<>());
    static final List<Map<Integer, Long>> ackedTags = java.util.Collections.synchronizedList(new ArrayList<>());
    /** Per applied batch: the thread that applied it, and whether the batch close saw that thread as free then. */
    static final List<String> applyThreads = java.util.Collections.synchronizedList(new ArrayList<>());
    static final List<Boolean> freeWhileApplying = java.util.Collections.synchronizedList(new ArrayList<>());

    @BeforeEach
    void adviseOnce() throws Exception {
        if (camel.isStarted()) {
            return;
        }
        AdviceWith.adviceWith(camel, APPLY_ROUTE, route -> {
            // the database away, on demand, for the next N tries of a batch
            route.weaveById("batch-is-applied-to-postgresql").before().process(exchange -> {
                applyThreads.add(Thread.currentThread().getName());
                freeWhileApplying.add(batches.isFree());
                if (defectsInNextApplies.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                    throw new IllegalStateException("a defect (test)");
                }
                int away = databaseAwayFor.getAndUpdate(n -> Math.max(0, n - 1));
                if (away > 0 && away % 2 == 0) {
                    // what a restart of PostgreSQL mid-transaction looks like: the rollback fails too, and
                    // Spring reports that instead of the statement's failure
                    throw new org.springframework.transaction.TransactionSystemException("JDBC rollback failed",
                            new org.postgresql.util.PSQLException("This connection has been closed.",
                                    org.postgresql.util.PSQLState.CONNECTION_DOES_NOT_EXIST));
                }
                if (away > 0) {
                    throw new org.springframework.jdbc.CannotGetJdbcConnectionException("database away (test)");
                }
            });
        });
        AdviceWith.adviceWith(camel, FINISHING_ROUTE, route -> {
            // a crash between commit and ack, on demand: the batch's channels die, the broker redelivers
            route.weaveById("batch-is-acknowledged").before().process(exchange -> {
                if (crashBeforeNextAck.compareAndSet(true, false)) {
                    exchange.setProperty("crashed", true);
                    for (Channel channel : exchange.getMessage().getBody(IngestBatch.class).deliveries().channels()) {
                        // the real channel, not the cache's proxy, whose close() only returns it to the cache
                        ((ChannelProxy) channel).getTargetChannel().close();
                    }
                }
            });
            route.weaveById("batch-is-acknowledged").after().process(exchange -> {
                ackThreads.add(Thread.currentThread().getName());
                Map<Integer, Long> tags = new HashMap<>();
                exchange.getMessage().getBody(IngestBatch.class).deliveries().lastTags()
                        .forEach((channel, tag) -> tags.put(channel.getChannelNumber(), tag));
                ackedTags.add(tags);
                if (exchange.getProperty("crashed") == null) {
                    acknowledged.addAndGet(exchange.getMessage().getBody(IngestBatch.class).size());
                }
            });
        });
        camel.start();
    }

    @Test
    void aChangeIsAnEventARepeatIsNot() {
        String s = register();
        int before = acknowledged.get();

        publish(reading(s, 1, T0 + 1000), reading(s, 1, T0 + 2000), reading(s, 0, T0 + 3000), reading(s, 0, T0 + 4000));

        awaitAcknowledged(before + 4);
        assertThat(events(s)).containsExactly("1:null->1", "2:1->0");
        assertThat(state(s)).containsEntry("state", 0).containsEntry("sequence", 2L).containsEntry("changed", T0 + 3000);
        // the last repeat is written with the change when the two share a batch; in a batch of its own it is within
        // its last-seen tolerance, held in memory, and the stored time may lag by as much (SensorStateStore)
        assertThat((Long) state(s).get("seen")).isBetween(T0 + 3000, T0 + 4000);
    }

    @Test
    void theFirstReadingIsAChangeFromNothing() {
        String s = register();
        int before = acknowledged.get();

        publish(reading(s, 0, T0));

        awaitAcknowledged(before + 1);
        assertThat(events(s)).containsExactly("1:null->0");
    }

    @Test
    void anOlderReadingNeverOverwritesANewerOne() {
        String s = register();
        int before = acknowledged.get();

        publish(reading(s, 1, T0 + 5000), reading(s, 0, T0 + 1000), reading(s, 0, T0 + 4999));

        awaitAcknowledged(before + 3);
        assertThat(events(s)).containsExactly("1:null->1");
        assertThat(state(s)).containsEntry("state", 1).containsEntry("seen", T0 + 5000);
    }

    @Test
    void readingsMeasuredAtTheSameMomentAreTakenInArrivalOrder() {
        String s = register();
        String amqp = register();
        int before = acknowledged.get();
        long second = (T0 / 1000 + 7) * 1000;

        // two changes in one second: the AMQP timestamp property has whole seconds, so both carry the same time
        publish(reading(s, 1, T0 + 7000), reading(s, 0, T0 + 7000),
                amqpTimed(amqp, 1, second), amqpTimed(amqp, 0, second));

        awaitAcknowledged(before + 4);
        assertThat(events(s)).containsExactly("1:null->1", "2:1->0");
        assertThat(state(s)).containsEntry("state", 0);
        assertThat(events(amqp)).containsExactly("1:null->1", "2:1->0");
        assertThat(state(amqp)).containsEntry("state", 0);
    }

    @Test
    void readingsWithAndWithoutTheirOwnTimeInterleave() {
        String s = register();
        int before = acknowledged.get();
        long now = System.currentTimeMillis();

        // a reading measured a moment ago, then one timed at receipt, then one measured since
        publish(reading(s, 1, now - 2000), json(s, "{\"sensor_id\":\"" + s + "\",\"data\":0}", null));
        awaitAcknowledged(before + 2);
        publish(reading(s, 1, System.currentTimeMillis()));
        awaitAcknowledged(before + 3);

        assertThat(events(s)).containsExactly("1:null->1", "2:1->0", "3:0->1");
    }

    /**
     * The attack of issue 37: a forged "closed" dated 4.5 s ahead (within the skew), then the door's genuine opening,
     * measured after the forgery arrived. The opening is applied: the forgery counts as measured when it arrived.
     */
    @Test
    void readingsAreHeldToTheSensorsOfThePublisherTheBrokerNames() {
        String a = "U" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        String b = "V" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'a'), (?, 'b')", a, b);
        String gateway = "gw-" + UUID.randomUUID().toString().substring(0, 8);
        devices.createGateway(gateway, null, List.of(a));
        String both = "[{\"sensor_id\":\"%s\",\"data\":0},{\"sensor_id\":\"%s\",\"data\":0}]".formatted(a, b);

        // a sensor's own login reports for that sensor alone: judged as the message is parsed
        List<?> bySensor = (List<?>) steps.parse(publishedBy("sensor." + a, both));
        assertThat(bySensor.get(0)).isInstanceOf(Reading.class);
        assertThat(((Rejection) bySensor.get(1)).reason()).isEqualTo(Rejection.Reason.NOT_AUTHORIZED);
        assertThat(((Rejection) bySensor.get(1)).detail()).contains(b).contains("sensor." + a);

        // a gateway's: against its sensors, per batch, before the batch is applied (or its readings forwarded)
        for (boolean forwardArrays : new boolean[] {false, true}) {
            IngestBatch batch = new IngestBatch();
            batch.add(steps.parse(publishedBy("gateway." + gateway, both)), null, null, forwardArrays);
            steps.refuseWhatPublishersMayNotReport(batch);
            steps.refuseWhatPublishersMayNotReport(batch); // as a batch retried after the database was away
            List<Reading> kept = forwardArrays ? batch.forwards() : batch.readings();
            assertThat(kept).extracting(Reading::sensorId).containsExactly(a);
            assertThat(batch.rejections()).singleElement().satisfies(r -> {
                assertThat(r.reason()).isEqualTo(Rejection.Reason.NOT_AUTHORIZED);
                assertThat(r.detail()).contains(b);
                assertThat(r.properties()).containsEntry("x-original-user-id", "gateway." + gateway);
            });
        }

        // no user-id (MQTT through RabbitMQ's plugin), or one of the broker's own users: the broker's word stands
        assertThat(steps.parse(publishedBy(null, both))).asList().allMatch(Reading.class::isInstance);
        assertThat(steps.parse(publishedBy("guest", both))).asList().allMatch(Reading.class::isInstance);
    }

    private static org.springframework.amqp.core.Message publishedBy(String userId, String body) {
        MessageProperties p = new MessageProperties();
        p.setUserId(userId);
        p.setReceivedExchange("lockwatch.readings");
        p.setReceivedRoutingKey("k");
        return new org.springframework.amqp.core.Message(body.getBytes(StandardCharsets.UTF_8), p);
    }

    @Test
    void aReadingDatedAheadCannotMakeALaterGenuineOneStale() {
        String s = register();
        int before = acknowledged.get();
        publish(reading(s, 1, System.currentTimeMillis() - 1000));
        awaitAcknowledged(before + 1);

        publish(reading(s, 1, System.currentTimeMillis() + 4500));
        awaitAcknowledged(before + 2);
        publish(reading(s, 0, System.currentTimeMillis()));
        awaitAcknowledged(before + 3);

        assertThat(events(s)).as("the opening is an event").containsExactly("1:null->1", "2:1->0");
        assertThat(state(s)).containsEntry("state", 0);
    }

    @Test
    void readingsWithoutTimeOrIdReceivedTogetherAreAllApplied() {
        String s = register();
        int before = acknowledged.get();

        // timed at receipt, often within the same millisecond: still two readings, in delivery order
        publish(json(s, "{\"sensor_id\":\"" + s + "\",\"data\":0}", null),
                json(s, "{\"sensor_id\":\"" + s + "\",\"data\":1}", null));

        awaitAcknowledged(before + 2);
        assertThat(events(s)).containsExactly("1:null->0", "2:0->1");
    }

    @Test
    void aRepeatedMessageIdChangesNothing() {
        String s = register();
        int before = acknowledged.get();

        // no measured time: the receipt time is used, so only the message id tells the third from a new reading
        publish(withId(s, 1, "m-1"), withId(s, 0, "m-2"), withId(s, 1, "m-1"));

        awaitAcknowledged(before + 3);
        assertThat(events(s)).containsExactly("1:null->1", "2:1->0");
        assertThat(state(s)).containsEntry("state", 0);
    }

    @Test
    void aBatchRedeliveredAfterACrashBetweenCommitAndAckChangesNothingTwice() {
        // one reading per sensor: a redelivery may come back in any order, and order is not what this is about
        String s = register();
        String u = register();
        String t = register();
        int before = acknowledged.get();
        double ignoredBefore = counter("lockwatch.readings.duplicate") + counter("lockwatch.readings.stale");
        crashBeforeNextAck.set(true);

        // the one with only an id first: a change closes its batch at once, so the batch that crashes may hold the
        // first reading alone, and only an id tells its redelivery from a reading at the time it is received again
        publish(withId(t, 1, "only-an-id"), reading(s, 1, T0 + 1000), reading(u, 0, T0 + 2000));

        // the first delivery is committed but never acked; the redelivery is acked
        awaitAcknowledged(before + 3);
        assertThat(crashBeforeNextAck).isFalse();
        assertThat(events(s)).containsExactly("1:null->1");
        assertThat(events(u)).containsExactly("1:null->0");
        assertThat(events(t)).containsExactly("1:null->1");
        // the crashed batch's readings came again, and the one with only an id was recognised by it
        assertThat(counter("lockwatch.readings.duplicate") + counter("lockwatch.readings.stale"))
                .isGreaterThanOrEqualTo(ignoredBefore + 1);
    }

    @Test
    void aBurstIsAcknowledgedBatchAfterBatchInOrderOnTheOneBatchThread() {
        // enough to keep the batch thread busy while more batches close by size, age and inactivity: a closed
        // batch run on the consumer's or the timer's thread instead would ack ahead of an earlier one; and the
        // finishing stage must ack them one by one in the order they were committed
        String[] sensors = new String[50];
        for (int i = 0; i < sensors.length; i++) {
            sensors[i] = register();
        }
        int before = acknowledged.get();
        int firstBatch = ackThreads.size();
        int firstApplied = applyThreads.size();
        List<Message> burst = new ArrayList<>();
        for (int i = 0; i < 5_000; i++) {
            burst.add(reading(sensors[i % sensors.length], (i / sensors.length) % 2, T0 + 1000 + i));
        }
        publish(burst.toArray(Message[]::new));
        awaitAcknowledged(before + 5_000);

        List<String> threads = List.copyOf(ackThreads.subList(firstBatch, ackThreads.size()));
        assertThat(threads).hasSizeGreaterThan(1).allSatisfy(t -> assertThat(t).contains("ingest-batches-to-finish"));
        assertThat(new java.util.HashSet<>(threads)).hasSize(1);
        // applied on the one batch thread, which the batch close saw as busy meanwhile
        List<String> applying = List.copyOf(applyThreads.subList(firstApplied, applyThreads.size()));
        assertThat(new java.util.HashSet<>(applying)).singleElement().asString()
                .contains("ingest-batches").doesNotContain("ingest-batches-to-finish");
        assertThat(freeWhileApplying.subList(firstApplied, freeWhileApplying.size())).containsOnly(false);
        Map<Integer, Long> highest = new HashMap<>();
        for (Map<Integer, Long> tags : List.copyOf(ackedTags.subList(firstBatch, ackedTags.size()))) {
            tags.forEach((channel, tag) -> {
                assertThat(tag).as("channel %d acked up to %d after a batch up to %d", channel, tag, highest.get(channel))
                        .isGreaterThan(highest.getOrDefault(channel, 0L));
                highest.put(channel, tag);
            });
        }
        // and the state is that of the last reading of each sensor
        for (int i = 0; i < sensors.length; i++) {
            assertThat(jdbc.queryForObject("SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, sensors[i]))
                    .isEqualTo(((5_000 - sensors.length + i) / sensors.length) % 2);
        }
    }

    @Test
    void aDatabaseThatIsAwayIsWaitedOutAndNothingIsLost() {
        String s = register();
        int before = acknowledged.get();
        databaseAwayFor.set(3);

        publish(reading(s, 1, T0 + 1000), reading(s, 0, T0 + 2000));

        awaitAcknowledged(before + 2);
        assertThat(databaseAwayFor).hasValue(0);
        assertThat(events(s)).containsExactly("1:null->1", "2:1->0");
    }

    /**
     * A failure no rule foresees (a defect) is a fault of the service, not the reading's: the ingest flow's route
     * configuration tries the batch again, unacknowledged, counting each failure, and the reading is applied once the
     * fault is gone; nothing is parked or counted as invalid.
     */
    @Test
    void aBatchADefectFailsIsRetriedUntilTheDefectIsGoneAndNothingIsParked() {
        amqpAdmin.purgeQueue(props.invalidQueue(), false);
        String s = register();
        int before = acknowledged.get();
        double failuresBefore = counter("lockwatch.ingest.apply.failures");
        double parkedBefore = parked();
        defectsInNextApplies.set(2);

        publish(reading(s, 1, T0 + 1000), reading(s, 0, T0 + 2000));

        awaitAcknowledged(before + 2);
        assertThat(defectsInNextApplies).hasValue(0);
        assertThat(events(s)).containsExactly("1:null->1", "2:1->0");
        assertThat(counter("lockwatch.ingest.apply.failures")).isEqualTo(failuresBefore + 2);
        assertThat(parked()).isEqualTo(parkedBefore);
        assertThat(rabbit.receive(props.invalidQueue(), 200)).isNull();
    }

    /**
     * Issue 54's failure itself: a constraint of the database the batch breaks (here another event already holds the
     * sequence the sensor's next one takes). Before, the reading was accepted, then parked as processing_failed and
     * lost; now it waits, unacknowledged, and is applied once the conflict is gone.
     */
    @Test
    void aReadingAConstraintRefusesIsHeldAndAppliedOnceTheConflictIsGoneNeverParked() {
        amqpAdmin.purgeQueue(props.invalidQueue(), false);
        String s = register();
        jdbc.update("INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at) VALUES (?, 1, 'sensor.state_changed', 0, now())", s);
        int before = acknowledged.get();
        double failuresBefore = counter("lockwatch.ingest.apply.failures");
        double parkedBefore = parked();

        publish(reading(s, 1, T0 + 1000));

        await().atMost(Duration.ofSeconds(20)).until(() -> counter("lockwatch.ingest.apply.failures") >= failuresBefore + 2);
        assertThat(acknowledged.get()).as("held unacknowledged").isEqualTo(before);
        assertThat(parked()).isEqualTo(parkedBefore);
        jdbc.update("DELETE FROM sensor_events WHERE sensor_id = ?", s);

        awaitAcknowledged(before + 1);
        assertThat(events(s)).containsExactly("1:null->1");
        assertThat(parked()).isEqualTo(parkedBefore);
        assertThat(rabbit.receive(props.invalidQueue(), 200)).isNull();
    }

    /**
     * A sensor deleted and registered again is a new sensor (issue 54): what the batch thread holds in memory of the
     * old registration (state 1) does not make the new one's first reading, also 1, a repeat; and its events go on
     * with the id's numbering, so none collides with the old registration's.
     */
    @Test
    void aSensorRegisteredAgainIsNewAndItsEventsGoOnWithTheIdsNumbering() {
        String s = register();
        int before = acknowledged.get();
        publish(reading(s, 1, T0 + 1000));
        awaitAcknowledged(before + 1);
        double failuresBefore = counter("lockwatch.ingest.apply.failures");

        jdbc.update("DELETE FROM sensors WHERE id = ?", s);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'the new sensor')", s);
        publish(reading(s, 1, T0 + 2000));
        awaitAcknowledged(before + 2);
        assertThat(state(s)).as("applied alone: no change of the same batch writes it through")
                .containsEntry("state", 1).containsEntry("sequence", 2L);
        publish(reading(s, 0, T0 + 3000));

        awaitAcknowledged(before + 3);
        assertThat(events(s)).containsExactly("1:null->1", "2:null->1", "3:1->0");
        assertThat(state(s)).containsEntry("state", 0).containsEntry("sequence", 3L).containsEntry("changed", T0 + 3000);
        assertThat(counter("lockwatch.ingest.apply.failures")).isEqualTo(failuresBefore);
    }

    /** Each flow names its queues; the backlog of each is a gauge tagged with its kind, asked of the broker. */
    @Test
    void theBacklogOfEveryQueueOfTheFlowsIsReportedWithItsKind() {
        Map<String, String> kinds = new HashMap<>();
        for (io.micrometer.core.instrument.Gauge g : meters.find("lockwatch.queue.messages").gauges()) {
            kinds.put(g.getId().getTag("queue"), g.getId().getTag("kind"));
        }
        assertThat(kinds).containsEntry(props.queue(), "readings").containsEntry(props.invalidQueue(), "invalid")
                .containsValue("history").hasSize(3);
        sampledGauges.sample(); // as the timer does every 10 s: a scrape reads the last sample
        assertThat(meters.get("lockwatch.queue.messages").tag("queue", props.queue()).gauge().value())
                .as("as the broker counts it").isNotNaN().isNotNegative();
    }

    @Test
    void aReadOnlyDatabaseIsWaitedOutLikeOneThatIsAwayAndNothingIsParked() throws Exception {
        String s = register();
        int before = acknowledged.get();
        long rolledBack = rollbacks();
        double parkedBefore = parked();
        readOnly(true); // what a failover to a standby looks like to the service
        try {
            publish(reading(s, 1, T0 + 1000));

            // tried, failed, and tried again (PostgreSQL counts the failed transactions): waited out, not parked
            await().atMost(Duration.ofSeconds(20)).until(() -> rollbacks() >= rolledBack + 3);
            assertThat(parked()).isEqualTo(parkedBefore);
            assertThat(acknowledged.get()).isEqualTo(before);
        } finally {
            readOnly(false);
        }

        awaitAcknowledged(before + 1);
        assertThat(events(s)).containsExactly("1:null->1");
        assertThat(parked()).isEqualTo(parkedBefore);
    }

    private long rollbacks() {
        return jdbc.queryForObject("SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()", Long.class);
    }

    /** Messages parked, every reason together. */
    private double parked() {
        return meters.find("lockwatch.readings.invalid").counters().stream()
                .mapToDouble(io.micrometer.core.instrument.Counter::count).sum();
    }

    private void readOnly(boolean on) {
        io.lockwatch.testing.Databases.readOnly(jdbc, on);
    }

    @Test
    void aMessageLargerThanTheBrokerTakesIsRefusedAtPublishAndGoodReadingsFlowOn() {
        String s = register();
        int before = acknowledged.get();
        byte[] huge = new byte[io.lockwatch.infra.embedded.EmbeddedAmqpBroker.MAX_MESSAGE_BYTES + 1];
        java.util.Arrays.fill(huge, (byte) 'x');

        // never read into the service: the publisher learns it at once, from the broker, which closes its channel.
        // A channel of its own, not the template's cached one: that one reopens itself on the next call, so the
        // wait for the confirm could land on a fresh channel with nothing to confirm, depending on timing.
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> {
            com.rabbitmq.client.ConnectionFactory factory = ((org.springframework.amqp.rabbit.connection.AbstractConnectionFactory)
                    rabbit.getConnectionFactory()).getRabbitConnectionFactory();
            try (com.rabbitmq.client.Connection connection = factory.newConnection("oversized-publisher")) {
                com.rabbitmq.client.Channel channel = connection.createChannel();
                channel.confirmSelect();
                channel.basicPublish(props.exchange(), s, null, huge);
                channel.waitForConfirmsOrDie(10_000);
            }
        }).hasMessageContaining(String.valueOf(io.lockwatch.infra.embedded.EmbeddedAmqpBroker.MAX_MESSAGE_BYTES));

        publish(reading(s, 1, T0 + 1000));
        awaitAcknowledged(before + 1);
        assertThat(events(s)).containsExactly("1:null->1");
    }

    @Test
    void readingsOfUnregisteredSensorsAreCountedAndCreateNoState() {
        String unknown = "U" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        double unknownBefore = counter("lockwatch.readings.unknown.sensor");
        int before = acknowledged.get();

        publish(reading(unknown, 1, T0));

        awaitAcknowledged(before + 1);
        assertThat(counter("lockwatch.readings.unknown.sensor")).isEqualTo(unknownBefore + 1);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensor_state WHERE sensor_id = ?", Integer.class, unknown)).isZero();
        assertThat(events(unknown)).isEmpty();
    }

    @Test
    void everyInvalidKindIsParkedWithItsReasonAndGoodReadingsFlowOn() {
        amqpAdmin.purgeQueue(props.invalidQueue(), false);
        String s = register();
        Map<String, String> bad = new HashMap<>();
        bad.put("malformed_json", "{\"sensor_id\": ");
        bad.put("not_an_object", "42");
        bad.put("missing_sensor_id", "{\"data\":1}");
        bad.put("invalid_sensor_id", "{\"sensor_id\":\"no-dashes\",\"data\":1}");
        bad.put("missing_data", "{\"sensor_id\":\"abc\"}");
        bad.put("invalid_data", "{\"sensor_id\":\"abc\",\"data\":\"1\"}");
        bad.put("invalid_ts", "{\"sensor_id\":\"abc\",\"data\":1,\"ts\":\"noon\"}");
        bad.put("ts_in_future", "{\"sensor_id\":\"abc\",\"data\":1,\"ts\":" + (System.currentTimeMillis() + 3_600_000) + "}");
        bad.put("invalid_message_id", "{\"sensor_id\":\"abc\",\"data\":1,\"message_id\":42}");
        bad.put("body_too_large", "{\"sensor_id\":\"abc\",\"data\":1,\"pad\":\"" + "x".repeat(5000) + "\"}");
        double invalidBefore = counter("lockwatch.readings.invalid", "reason", "invalid_data");
        int before = acknowledged.get();

        List<Message> messages = new ArrayList<>();
        messages.add(reading(s, 1, T0 + 1000));
        bad.values().forEach(body -> messages.add(raw(body)));
        messages.add(reading(s, 0, T0 + 2000));
        publish(messages.toArray(Message[]::new));

        awaitAcknowledged(before + messages.size());
        Map<String, String> parked = new HashMap<>();
        for (int i = 0; i < bad.size(); i++) {
            Message m = rabbit.receive(props.invalidQueue(), 5000);
            assertThat(m).as("parked message %d of %d", i + 1, bad.size()).isNotNull();
            parked.put((String) m.getMessageProperties().getHeader(IngestSteps.REASON_HEADER),
                    new String(m.getBody(), StandardCharsets.UTF_8));
            assertThat((String) m.getMessageProperties().getHeader(IngestSteps.DETAIL_HEADER)).isNotBlank();
        }
        assertThat(parked).isEqualTo(bad);
        assertThat(counter("lockwatch.readings.invalid", "reason", "invalid_data")).isEqualTo(invalidBefore + 1);
        assertThat(events(s)).containsExactly("1:null->1", "2:1->0");
    }

    /**
     * A message that parsing fails on unexpectedly is parked as processing_failed with its batch, at once: the
     * consumer's steps are in memory, so nothing is retried (a retry would hold every message behind it), and the
     * message is acknowledged only with its batch, never dropped by a later one's multiple-ack.
     */
    @Test
    void aMessageParsingFailsOnUnexpectedlyIsParkedOnceAndGoodReadingsFlowOn() {
        amqpAdmin.purgeQueue(props.invalidQueue(), false);
        String s = register();
        int before = acknowledged.get();
        String defect = "{\"sensor_id\":\"" + s + "\",\"data\":1,\"explode\":true}";
        int attemptsBefore = parseAttempts.get();

        publish(reading(s, 1, T0 + 1000), raw(defect), reading(s, 0, T0 + 2000));

        awaitAcknowledged(before + 3);
        assertThat(parseAttempts.get() - attemptsBefore).as("each message parsed once, none retried").isEqualTo(3);
        Message parked = rabbit.receive(props.invalidQueue(), 5000);
        assertThat(parked).isNotNull();
        assertThat(parked.getMessageProperties().<String>getHeader(IngestSteps.REASON_HEADER)).isEqualTo("processing_failed");
        assertThat(parked.getMessageProperties().<String>getHeader(IngestSteps.DETAIL_HEADER)).contains("parser defect (test)");
        assertThat(new String(parked.getBody(), StandardCharsets.UTF_8)).isEqualTo(defect);
        assertThat(events(s)).containsExactly("1:null->1", "2:1->0");
    }

    /** A gateway's message: an array of readings, each judged on its own, acknowledged as one message. */
    @Test
    void anArrayMessageAppliesItsGoodReadingsInOrderAndParksItsBadOnesWithTheirIndex() {
        amqpAdmin.purgeQueue(props.invalidQueue(), false);
        String s = register();
        String other = register();
        int before = acknowledged.get();
        String body = """
                [{"sensor_id":"%1$s","data":1,"ts":%3$d},
                 {"sensor_id":"%1$s","data":0,"ts":%4$d},
                 {"sensor_id":"%1$s","data":"open"},
                 {"sensor_id":"%2$s","data":1,"ts":%3$d},
                 {"sensor_id":"%1$s","data":1,"ts":%5$d}]""".formatted(s, other, T0 + 1000, T0 + 2000, T0 + 3000);

        publish(json(s, body, "gateway-1"));

        awaitAcknowledged(before + 5); // counted by the readings and rejections of the batches acknowledged
        assertThat(events(s)).containsExactly("1:null->1", "2:1->0", "3:0->1");
        assertThat(events(other)).containsExactly("1:null->1");
        Message parked = rabbit.receive(props.invalidQueue(), 5000);
        assertThat(parked).isNotNull();
        assertThat(parked.getMessageProperties().<String>getHeader(IngestSteps.REASON_HEADER)).isEqualTo("invalid_data");
        assertThat(parked.getMessageProperties().<Object>getHeader(ReadingParser.INDEX_HEADER)).isEqualTo(2);
        assertThat(parked.getMessageProperties().<String>getHeader(IngestSteps.DETAIL_HEADER)).startsWith("[2] ");
        assertThat(new String(parked.getBody(), StandardCharsets.UTF_8)).isEqualTo("{\"sensor_id\":\"" + s + "\",\"data\":\"open\"}");
        assertThat(rabbit.receive(props.invalidQueue(), 200)).as("only the bad reading is parked").isNull();

        // delivered again (a publisher that retried): every reading is known by its message id and index
        publish(json(s, body, "gateway-1"));
        awaitAcknowledged(before + 10);
        assertThat(events(s)).hasSize(3);
    }

    // --- helpers

    private String register() {
        String id = "S" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, ?)", id, "Moscow, Russia, Svobody st. 23 fl 1 room 16");
        return id;
    }

    private void publish(Message... messages) {
        for (Message m : messages) {
            m.getMessageProperties().setReceivedRoutingKey(routingKey(m));
        }
        io.lockwatch.testing.Readings.publishInOrder(rabbit, props.exchange(), List.of(messages));
    }

    private static String routingKey(Message m) {
        Object key = m.getMessageProperties().getHeader("test-key");
        return key == null ? "unknown" : key.toString();
    }

    private static Message reading(String sensor, int data, long ts) {
        return json(sensor, "{\"sensor_id\":\"" + sensor + "\",\"data\":" + data + ",\"ts\":" + ts + "}", null);
    }

    /** Without a ts in the body: measured at the AMQP timestamp property. */
    private static Message amqpTimed(String sensor, int data, long millis) {
        Message m = json(sensor, "{\"sensor_id\":\"" + sensor + "\",\"data\":" + data + "}", null);
        m.getMessageProperties().setTimestamp(new java.util.Date(millis));
        return m;
    }

    private static Message withId(String sensor, int data, String messageId) {
        return json(sensor, "{\"sensor_id\":\"" + sensor + "\",\"data\":" + data + "}", messageId);
    }

    private static Message json(String sensor, String body, String messageId) {
        MessageProperties p = new MessageProperties();
        p.setContentType("application/json");
        p.setHeader("test-key", sensor);
        if (messageId != null) {
            p.setMessageId(messageId);
        }
        return new Message(body.getBytes(StandardCharsets.UTF_8), p);
    }

    private static Message raw(String body) {
        return new Message(body.getBytes(StandardCharsets.UTF_8), new MessageProperties());
    }

    private void awaitAcknowledged(int total) {
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(acknowledged.get()).isGreaterThanOrEqualTo(total));
    }

    private List<String> events(String sensor) {
        return jdbc.query("SELECT sequence, previous_state, state FROM sensor_events WHERE sensor_id = ? ORDER BY sequence",
                (rs, i) -> rs.getLong(1) + ":" + rs.getObject(2) + "->" + rs.getInt(3), sensor);
    }

    private Map<String, Object> state(String sensor) {
        return jdbc.queryForObject("""
                SELECT state, sequence, (extract(epoch FROM state_changed_at) * 1000)::bigint AS changed,
                       (extract(epoch FROM last_seen_at) * 1000)::bigint AS seen
                  FROM sensor_state WHERE sensor_id = ?""",
                (rs, i) -> Map.of("state", rs.getInt(1), "sequence", rs.getLong(2), "changed", rs.getLong(3),
                        "seen", rs.getLong(4)), sensor);
    }

    private double counter(String name, String... tags) {
        var c = meters.find(name).tags(tags).counter();
        return c == null ? 0 : c.count();
    }
}
