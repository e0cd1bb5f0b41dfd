package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.notify.WebhookReceiver.Received;
import io.lockwatch.testing.Readings;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Notifications end to end on the embedded default, delivered to a real HTTP server on loopback: readings are
 * published, and what arrives (and when) is read off the receiver. The retry schedule is shortened to 1 s, 2 s.
 */
@CamelSpringBootTest
@SpringBootTest(properties = {
        "lockwatch.notify.retry-schedule=1s,2s",
        "lockwatch.notify.timeout=1500ms",
        "lockwatch.notify.connect-timeout=500ms",
        "lockwatch.notify.poll-interval=100",
        "lockwatch.notify.circuit-failures=1000"})
class NotifyRouteTest {

    static final ObjectMapper JSON = new ObjectMapper();
    @org.junit.jupiter.api.extension.RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired IngestProperties ingest;
    @Autowired org.apache.camel.CamelContext camel;
    @Autowired io.micrometer.core.instrument.MeterRegistry meters;
    @Autowired io.lockwatch.infra.metrics.SampledGauges sampledGauges;
    @Autowired NotificationStore store;
    @Autowired io.lockwatch.registry.Registry registry;
    @Autowired TestPing ping;

    record Client(UUID id, String secret, String path) {
    }



    @Test
    void aStateChangeIsPostedSignedToEveryLinkedClient() throws Exception {
        String sensor = sensor();
        Client a = client(), b = client();
        link(a, sensor);
        link(b, sensor);
        long ts = System.currentTimeMillis() - 1000;

        publish(sensor, 1, ts);

        await().atMost(Duration.ofSeconds(10)).until(() -> receiver.at(a.path()).size() == 1 && receiver.at(b.path()).size() == 1);
        Received r = receiver.at(a.path()).get(0);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.get("type").asText()).isEqualTo("sensor.state_changed");
        assertThat(body.get("sensor_id").asText()).isEqualTo(sensor);
        assertThat(body.get("address").asText()).isEqualTo("Moscow, Russia, Svobody st. 23 fl 1 room 16");
        assertThat(body.get("state").asInt()).isEqualTo(1);
        assertThat(body.get("previous_state").isNull()).isTrue();
        assertThat(body.get("sequence").asLong()).isEqualTo(1);
        assertThat(body.get("occurred_at").asText())
                .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z")
                .satisfies(t -> assertThat(java.time.Instant.parse(t).toEpochMilli()).isEqualTo(ts));
        assertThat(body.get("client_id").asText()).isEqualTo(a.id().toString());
        assertThat(r.header("webhook-id")).isEqualTo(body.get("id").asText());
        assertThat(Long.parseLong(r.header("webhook-timestamp"))).isCloseTo(System.currentTimeMillis() / 1000, org.assertj.core.data.Offset.offset(60L));
        assertThat(WebhookReceiver.signatureValid(r, a.secret())).isTrue();
        assertThat(WebhookReceiver.signatureValid(r, b.secret())).isFalse();
        // tracing is off unless turned on: nothing of a trace goes out (TracingTest has it on)
        assertThat(r.header("traceparent")).isNull();
        await().atMost(Duration.ofSeconds(5)).until(() -> "delivered".equals(status(UUID.fromString(r.header("webhook-id")))));
    }

    @Test
    void aRepeatNotifiesNobody() {
        String sensor = sensor();
        Client a = client();
        link(a, sensor);
        long ts = System.currentTimeMillis() - 10_000;

        publish(sensor, 0, ts);
        await().atMost(Duration.ofSeconds(10)).until(() -> receiver.at(a.path()).size() == 1);
        Readings.publishInOrder(rabbit, ingest.exchange(),
                List.of(Readings.reading(sensor, 0, ts + 1000), Readings.reading(sensor, 1, ts + 2000)));

        await().atMost(Duration.ofSeconds(10)).until(() -> receiver.at(a.path()).size() == 2);
        assertThat(receiver.at(a.path())).extracting(r -> field(r, "sequence")).containsExactly("1", "2");
        assertThat(receiver.at(a.path())).extracting(r -> field(r, "previous_state")).containsExactly("null", "0");
    }

    @Test
    void everyChangeOfAQuickSeriesReachesAHealthyClientInOrder() {
        String sensor = sensor();
        Client a = client();
        link(a, sensor);
        long ts = System.currentTimeMillis() - 10_000;

        // often one batch: every change of it is still posted, one after the other
        List<Message> quick = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            quick.add(Readings.reading(sensor, i % 2, ts + i));
        }
        Readings.publishInOrder(rabbit, ingest.exchange(), quick);

        awaitOrExplain(a, () -> receiver.at(a.path()).size() == 6);
        assertThat(receiver.at(a.path())).extracting(r -> field(r, "sequence")).containsExactly("1", "2", "3", "4", "5", "6");
        assertThat(receiver.at(a.path())).extracting(r -> field(r, "state")).containsExactly("0", "1", "0", "1", "0", "1");
        await().atMost(Duration.ofSeconds(5)).until(() -> statuses(a.id()).stream().allMatch("delivered"::equals));
        assertThat(statuses(a.id())).hasSize(6);
    }

    @Test
    void oneZeroOneInOneBatchReachesAHealthyClientAsTwoChangesInOrder() {
        String sensor = sensor();
        Client a = client();
        link(a, sensor);
        long ts = System.currentTimeMillis() - 10_000;
        publish(sensor, 1, ts);
        awaitOrExplain(a, () -> receiver.at(a.path()).size() == 1);

        Readings.publishInOrder(rabbit, ingest.exchange(), List.of(Readings.reading(sensor, 1, ts + 1000),
                Readings.reading(sensor, 0, ts + 1001), Readings.reading(sensor, 1, ts + 1002)));

        awaitOrExplain(a, () -> receiver.at(a.path()).size() == 3);
        assertThat(receiver.at(a.path())).extracting(r -> field(r, "sequence") + ":" + field(r, "state"))
                .containsExactly("1:1", "2:0", "3:1");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM notifications WHERE client_id = ? AND status = 'superseded'",
                Integer.class, a.id())).isZero();
    }

    @Test
    void aLostSensorBackWithANewStateIsRestoredThenChanged() {
        String sensor = sensor();
        Client a = client();
        link(a, sensor);
        long ts = System.currentTimeMillis() - 10_000;
        publish(sensor, 1, ts);
        awaitOrExplain(a, () -> receiver.at(a.path()).size() == 1);
        // the heartbeat declared it lost (its own test covers how)
        jdbc.update("UPDATE sensor_state SET connectivity = 'lost' WHERE sensor_id = ?", sensor);

        publish(sensor, 0, ts + 1000);

        awaitOrExplain(a, () -> receiver.at(a.path()).size() == 3);
        assertThat(receiver.at(a.path())).extracting(r -> field(r, "sequence") + ":" + field(r, "type"))
                .containsExactly("1:sensor.state_changed", "2:sensor.connection_restored", "3:sensor.state_changed");
    }

    @Test
    void aLatestStateClientIsSentTheNewestStateAndNeverAnOlderAfterIt() {
        String sensor = sensor();
        Client a = client();
        jdbc.update("UPDATE clients SET delivery_mode = 'latest_state' WHERE id = ?", a.id());
        link(a, sensor);
        long ts = System.currentTimeMillis() - 10_000;

        List<Message> quick = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            quick.add(Readings.reading(sensor, i % 2, ts + i));
        }
        Readings.publishInOrder(rabbit, ingest.exchange(), quick);

        awaitOrExplain(a, () -> receiver.at(a.path()).stream().anyMatch(r -> field(r, "sequence").equals("6")));
        await().atMost(Duration.ofSeconds(5)).until(() -> statuses(a.id()).stream()
                .allMatch(st -> st.equals("delivered") || st.equals("superseded")));
        List<Integer> arrived = receiver.at(a.path()).stream().map(r -> Integer.parseInt(field(r, "sequence"))).toList();
        assertThat(arrived).isSorted().doesNotHaveDuplicates().endsWith(6);
        assertThat(statuses(a.id())).hasSize(6).endsWith("delivered");
        if (arrived.size() < 6) {
            assertThat(statuses(a.id())).contains("superseded");
        }
        assertThat(jdbc.queryForObject("""
                SELECT count(*) FROM notifications s
                 WHERE s.client_id = ? AND s.status = 'superseded'
                   AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.id = s.superseded_by AND n.sequence > s.sequence)""",
                Integer.class, a.id())).as("each superseded one names a newer notification").isZero();
        assertThat(supersededReasons(a.id())).allMatch("latest_state"::equals);
    }

    @Test
    void failedAttemptsAreRetriedOnTheScheduleThenTheNotificationIsDead() {
        String sensor = sensor();
        Client a = client();
        receiver.answer(a.path(), 500);
        link(a, sensor);

        publish(sensor, 1, System.currentTimeMillis());

        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at(a.path()).size() == 3);
        List<Received> attempts = receiver.at(a.path());
        assertThat(attempts).extracting(r -> r.header("webhook-id")).containsOnly(attempts.get(0).header("webhook-id"));
        // the schedule's 1 s and 2 s, each give or take a fifth
        assertThat(attempts.get(1).arrivedAt() - attempts.get(0).arrivedAt()).isGreaterThanOrEqualTo(800);
        assertThat(attempts.get(2).arrivedAt() - attempts.get(1).arrivedAt()).isGreaterThanOrEqualTo(1600);
        UUID id = UUID.fromString(attempts.get(0).header("webhook-id"));
        await().atMost(Duration.ofSeconds(5)).until(() -> "dead".equals(status(id)));
        assertThat(jdbc.queryForList("SELECT status_code FROM delivery_attempts WHERE notification_id = ? ORDER BY attempt",
                Integer.class, id)).containsExactly(500, 500, 500);
        sampledGauges.sample(); // as the timer does every 10 s: a scrape reads the last sample
        assertThat(meters.get("lockwatch.notifications.dead").gauge().value()).isGreaterThanOrEqualTo(1);
    }

    @Test
    void timeoutsAndRefusedConnectionsAreFailedAttempts() throws Exception {
        String sensor = sensor();
        Client hanging = client();
        receiver.answer(hanging.path(), WebhookReceiver.HANG);
        UUID refusedClient = clientAt(closedPortUrl());
        link(hanging, sensor);
        jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)", refusedClient, sensor);

        publish(sensor, 1, System.currentTimeMillis());

        await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
            assertThat(errors(hanging.id())).hasSizeGreaterThanOrEqualTo(2).allMatch(e -> e.contains("Timeout"));
            assertThat(errors(refusedClient)).hasSizeGreaterThanOrEqualTo(2).allMatch(e -> e.contains("Connect"));
        });
    }

    /** A secret sealed with a key no longer configured fails its own client's attempts, and holds up no other's. */
    @Test
    void aSecretThatCannotBeOpenedFailsOnlyItsClientsAttempts() {
        String sensor = sensor();
        Client healthy = client();
        link(healthy, sensor);
        String path = "/hook-" + UUID.randomUUID();
        String sealedWithAGoneKey = new io.lockwatch.secrets.SecretCipher(
                List.of(io.lockwatch.secrets.SecretCipher.newKey("gone"))).seal(WebhookSigner.newSecret());
        UUID locked = jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('test', ?, ?) RETURNING id",
                UUID.class, receiver.url(path), sealedWithAGoneKey);
        jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)", locked, sensor);

        publish(sensor, 1, System.currentTimeMillis());

        awaitOrExplain(healthy, () -> receiver.at(healthy.path()).size() == 1);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                assertThat(errors(locked)).isNotEmpty().allMatch(e -> e.contains("cannot be opened")));
        assertThat(receiver.at(path)).as("nothing is posted unsigned").isEmpty();
    }

    @Test
    void aFailingEndpointThatRecoversIsSentOnlyTheNewestStateAndConnectivity() {
        String sensor = sensor();
        Client a = client();
        receiver.answer(a.path(), 503);
        link(a, sensor);
        long ts = System.currentTimeMillis() - 10_000;

        publish(sensor, 1, ts);
        await().atMost(Duration.ofSeconds(10)).until(() -> receiver.at(a.path()).size() == 1);
        String first = receiver.at(a.path()).get(0).header("webhook-id");
        // behind the failed head, while it waits for its retry: changes, a silence and a return
        publishSeries(sensor, ts + 1000, 0, 1);
        awaitOrExplain(a, () -> jdbc.queryForObject(
                "SELECT count(*) FROM notifications WHERE client_id = ?", Integer.class, a.id()) == 3);
        jdbc.update("UPDATE sensor_state SET connectivity = 'lost' WHERE sensor_id = ?", sensor);
        publish(sensor, 0, ts + 3000);
        awaitOrExplain(a, () -> jdbc.queryForObject(
                "SELECT count(*) FROM notifications WHERE client_id = ?", Integer.class, a.id()) == 5);
        receiver.answer(a.path(), 200);

        awaitOrExplain(a, () -> receiver.at(a.path()).stream().anyMatch(r -> field(r, "sequence").equals("5")));
        await().atMost(Duration.ofSeconds(5)).until(() -> statuses(a.id()).stream()
                .allMatch(st -> st.equals("delivered") || st.equals("superseded")));
        // the failed first attempt, then only the newest connectivity (restored, 4) and state (5), in order
        assertThat(receiver.at(a.path())).extracting(r -> field(r, "sequence") + ":" + field(r, "type"))
                .containsExactly("1:sensor.state_changed", "4:sensor.connection_restored", "5:sensor.state_changed");
        assertThat(statuses(a.id())).containsExactly("superseded", "superseded", "superseded", "delivered", "delivered");
        assertThat(supersededReasons(a.id())).as("the endpoint failed without a success since").containsOnly("failing");
        String newestState = jdbc.queryForObject("SELECT id::text FROM notifications WHERE client_id = ? AND sequence = 5",
                String.class, a.id());
        // each superseded one names what replaced it then; the chain ends at the newest state
        String replacement = first;
        for (int hops = 0; hops < 4; hops++) {
            String next = jdbc.queryForObject("SELECT superseded_by::text FROM notifications WHERE id = ?::uuid",
                    String.class, replacement);
            if (next == null) {
                break;
            }
            replacement = next;
        }
        assertThat(replacement).isEqualTo(newestState);
    }

    @Test
    void aClientIsSentOnlyTheEventTypesItAskedFor() {
        String sensor = sensor();
        Client a = client();
        jdbc.update("UPDATE clients SET event_types = ARRAY['sensor.connection_restored'] WHERE id = ?", a.id());
        Client b = client();
        link(a, sensor);
        link(b, sensor);
        long ts = System.currentTimeMillis() - 10_000;
        publish(sensor, 1, ts);
        awaitOrExplain(b, () -> receiver.at(b.path()).size() == 1);
        jdbc.update("UPDATE sensor_state SET connectivity = 'lost' WHERE sensor_id = ?", sensor);

        publish(sensor, 0, ts + 1000);

        awaitOrExplain(b, () -> receiver.at(b.path()).size() == 3);
        awaitOrExplain(a, () -> receiver.at(a.path()).size() == 1);
        assertThat(receiver.at(a.path()).get(0).body()).contains("\"type\":\"sensor.connection_restored\"");
        assertThat(jdbc.queryForList("SELECT type FROM notifications WHERE client_id = ?", String.class, a.id()))
                .containsExactly("sensor.connection_restored");
    }

    @Test
    void goneAnswer410PausesTheClientAndResumingSendsItsCollapsedBacklogInOrder() {
        String sensor = sensor();
        Client a = client();
        receiver.answer(a.path(), 410);
        link(a, sensor);
        long ts = System.currentTimeMillis() - 10_000;

        publish(sensor, 1, ts);
        await().atMost(Duration.ofSeconds(10)).until(() -> !jdbc.queryForObject(
                "SELECT enabled FROM clients WHERE id = ?", Boolean.class, a.id()));
        assertThat(jdbc.queryForObject("SELECT paused_reason FROM clients WHERE id = ?", String.class, a.id())).contains("410");
        publishSeries(sensor, ts + 1000, 0, 1, 0, 1);
        awaitOrExplain(a, () -> jdbc.queryForObject(
                "SELECT count(*) FROM notifications WHERE client_id = ?", Integer.class, a.id()) == 5);
        assertThat(receiver.at(a.path())).as("a paused client is posted nothing").hasSize(1);

        receiver.answer(a.path(), 200);
        assertThat(store.resume(a.id())).isTrue();

        awaitOrExplain(a, () -> receiver.at(a.path()).size() == 2);
        assertThat(receiver.at(a.path())).extracting(r -> field(r, "sequence")).containsExactly("1", "5");
        await().atMost(Duration.ofSeconds(5)).until(() -> statuses(a.id()).equals(
                List.of("superseded", "superseded", "superseded", "superseded", "delivered")));
        assertThat(supersededReasons(a.id())).containsOnly("paused");
    }

    @Test
    void anOperatorsPauseHoldsEverythingAndResumeSendsTheCollapsedBacklogInOrder() {
        String sensor = sensor();
        Client a = client();
        link(a, sensor);
        assertThat(store.pause(a.id(), "paused by an operator")).isTrue();
        long ts = System.currentTimeMillis() - 10_000;
        jdbc.update("INSERT INTO sensor_state (sensor_id) VALUES (?) ON CONFLICT DO NOTHING", sensor);
        publishSeries(sensor, ts, 0, 1, 0, 1);
        awaitOrExplain(a, () -> jdbc.queryForObject(
                "SELECT count(*) FROM notifications WHERE client_id = ?", Integer.class, a.id()) == 4);
        assertThat(statuses(a.id())).containsExactly("superseded", "superseded", "superseded", "pending");
        assertThat(supersededReasons(a.id())).containsExactly("paused", "paused", "paused");
        assertThat(receiver.at(a.path())).isEmpty();

        assertThat(store.resume(a.id())).isTrue();

        awaitOrExplain(a, () -> receiver.at(a.path()).size() == 1);
        assertThat(receiver.at(a.path())).extracting(r -> field(r, "sequence") + ":" + field(r, "state")).containsExactly("4:1");
    }

    @Test
    void aRotatedSecretSignsBesideTheNewOneForItsGracePeriodThenNoMore() throws Exception {
        String sensor = sensor();
        Client a = client();
        link(a, sensor);
        String rotated = registry.rotateSecret(a.id(), Duration.ofHours(1)).webhookSecret();
        long ts = System.currentTimeMillis() - 10_000;

        publish(sensor, 1, ts);
        awaitOrExplain(a, () -> receiver.at(a.path()).size() == 1);
        Received during = receiver.at(a.path()).get(0);
        assertThat(during.header("webhook-signature").split(" ")).hasSize(2).allMatch(sig -> sig.startsWith("v1,"));
        assertThat(WebhookReceiver.signatureValid(during, rotated)).as("the new secret's").isTrue();
        assertThat(WebhookReceiver.signatureValid(during, a.secret())).as("the old secret's, for the grace period").isTrue();

        jdbc.update("UPDATE clients SET previous_secret_until = now() - interval '1 second' WHERE id = ?", a.id());
        publish(sensor, 0, ts + 1000);
        awaitOrExplain(a, () -> receiver.at(a.path()).size() == 2);
        Received after = receiver.at(a.path()).get(1);
        assertThat(after.header("webhook-signature").split(" ")).hasSize(1);
        assertThat(WebhookReceiver.signatureValid(after, rotated)).isTrue();
        assertThat(WebhookReceiver.signatureValid(after, a.secret())).isFalse();
    }

    @Test
    void aTestPingIsSignedSentAtOnceAndTellsHowTheEndpointAnswered() throws Exception {
        Client a = client();
        TestPing.Result ok = ping.send(a.id());
        assertThat(ok.statusCode()).isEqualTo(200);
        assertThat(ok.error()).isNull();
        Received test = receiver.at(a.path()).get(0);
        assertThat(field(test, "type")).isEqualTo("webhook.test");
        assertThat(WebhookReceiver.signatureValid(test, a.secret())).isTrue();

        receiver.answer(a.path(), 500);
        TestPing.Result failed = ping.send(a.id());
        assertThat(failed.statusCode()).isEqualTo(500);
        assertThat(failed.error()).isEqualTo("HTTP 500");
        assertThat(ping.send(UUID.randomUUID())).isNull();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM notifications WHERE client_id = ?", Integer.class, a.id()))
                .as("a test event is no notification").isZero();
    }

    @Test
    void replayingSinceATimeSendsWhatWasNotDeliveredAgainInOrderWithItsWebhookId() {
        String sensor = sensor();
        Client a = client();
        receiver.answer(a.path(), 500);
        link(a, sensor);
        java.time.Instant before = java.time.Instant.now().minusSeconds(1);
        long ts = System.currentTimeMillis() - 10_000;
        publish(sensor, 1, ts);
        await().atMost(Duration.ofSeconds(15)).until(() -> statuses(a.id()).equals(List.of("dead")));
        String deadId = receiver.at(a.path()).get(0).header("webhook-id");
        receiver.answer(a.path(), 200);
        publish(sensor, 0, ts + 1000);
        awaitOrExplain(a, () -> receiver.at(a.path()).stream().anyMatch(r -> field(r, "sequence").equals("2")));
        int before2 = receiver.at(a.path()).size();

        assertThat(store.replay(a.id(), before)).isEqualTo(1);

        awaitOrExplain(a, () -> receiver.at(a.path()).size() == before2 + 1);
        Received again = receiver.at(a.path()).get(before2);
        assertThat(again.header("webhook-id")).isEqualTo(deadId);
        assertThat(field(again, "sequence")).isEqualTo("1");
        assertThat(field(again, "replayed")).as("it comes after the sensor's newer event, and says so").isEqualTo("true");
        assertThat(receiver.at(a.path()).subList(0, before2)).as("a live event says nothing of replay")
                .allMatch(r -> !body(r).has("replayed"));
        await().atMost(Duration.ofSeconds(5)).until(() -> statuses(a.id()).equals(List.of("delivered", "delivered")));
        assertThat(store.replay(UUID.randomUUID(), before)).isNull();
    }

    /** A latest_state client is replayed a sensor's newest state only: an older one would read as the state now. */
    @Test
    void aLatestStateClientIsReplayedOnlyTheNewestStateOfEachSensor() {
        String sensor = sensor(), other = sensor();
        Client a = client();
        jdbc.update("UPDATE clients SET delivery_mode = 'latest_state' WHERE id = ?", a.id());
        receiver.answer(a.path(), 500);
        link(a, sensor);
        link(a, other);
        java.time.Instant before = java.time.Instant.now().minusSeconds(1);
        long ts = System.currentTimeMillis() - 10_000;
        publish(sensor, 1, ts);
        publish(other, 1, ts);
        await().atMost(Duration.ofSeconds(15)).until(() -> statuses(a.id()).equals(List.of("dead", "dead")));
        receiver.answer(a.path(), 200);
        publish(sensor, 0, ts + 1000); // the sensor's newer state, delivered
        awaitOrExplain(a, () -> receiver.at(a.path()).stream().anyMatch(r -> field(r, "sequence").equals("2")));
        int before2 = receiver.at(a.path()).size();

        // the other sensor's dead state is still its newest: replayed; the first sensor's is not
        assertThat(store.replay(a.id(), before)).isEqualTo(1);

        awaitOrExplain(a, () -> receiver.at(a.path()).size() == before2 + 1);
        assertThat(field(receiver.at(a.path()).get(before2), "sensor_id")).isEqualTo(other);
    }

    @Test
    void aClientsDeliveryStatsCountItsAttemptsAndTheirLatency() {
        String sensor = sensor();
        Client a = client();
        link(a, sensor);
        publish(sensor, 1, System.currentTimeMillis());
        awaitOrExplain(a, () -> receiver.at(a.path()).size() == 1);
        await().atMost(Duration.ofSeconds(5)).until(() -> statuses(a.id()).equals(List.of("delivered")));

        Map<String, Object> stats = store.deliveryStats(a.id());
        @SuppressWarnings("unchecked")
        Map<String, Object> hour = (Map<String, Object>) stats.get("last_hour");
        assertThat(hour.get("delivered")).isEqualTo(1L);
        assertThat(hour.get("failed")).isEqualTo(0L);
        assertThat((Long) hour.get("latency_p99_ms")).isNotNull().isGreaterThanOrEqualTo(0L);
        assertThat(stats.get("last_error")).isNull();
    }

    @Test
    void eachStageOfAChangesWayToItsAnswerIsTimedByTheService() {
        // lockwatch_pipeline_stage_seconds: what the benchmark reads to say where a notification's time went
        String[] stages = {"consumed_to_committed", "committed_to_claimed", "claimed_to_sent", "sent_to_answered"};
        Map<String, Long> before = new java.util.HashMap<>();
        for (String stage : stages) {
            before.put(stage, stage(stage).count());
        }
        String sensor = sensor();
        Client a = client();
        receiver.delay(a.path(), 300);
        link(a, sensor);

        publish(sensor, 1, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(10)).until(() -> receiver.at(a.path()).size() == 1);
        // each stage is recorded by the thread that ends it, so each is waited for on its own
        for (String stage : stages) {
            await(stage).atMost(Duration.ofSeconds(10)).until(() -> stage(stage).count() > before.get(stage));
        }
        assertThat(stage("sent_to_answered").max(java.util.concurrent.TimeUnit.MILLISECONDS))
                .as("the POST's time holds the endpoint's 300 ms").isGreaterThanOrEqualTo(300);
    }

    private io.micrometer.core.instrument.Timer stage(String stage) {
        return meters.get(io.lockwatch.infra.metrics.PipelineStages.NAME).tag("stage", stage).timer();
    }

    @Test
    void eachAttemptUsesTheClientsCurrentUrl() {
        String sensor = sensor();
        Client a = client();
        receiver.answer(a.path(), 500);
        link(a, sensor);

        publish(sensor, 1, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(10)).until(() -> receiver.at(a.path()).size() == 1);
        String moved = "/moved-" + UUID.randomUUID();
        jdbc.update("UPDATE clients SET url = ? WHERE id = ?", receiver.url(moved), a.id());

        await().atMost(Duration.ofSeconds(10)).until(() -> receiver.at(moved).size() == 1);
        assertThat(receiver.at(moved).get(0).header("webhook-id")).isEqualTo(receiver.at(a.path()).get(0).header("webhook-id"));
        assertThat(receiver.at(a.path())).hasSize(1);
    }

    @Test
    void aClientUnlinkedSinceIsNotNotifiedAndTheNotificationIsCancelled() {
        String sensor = sensor();
        Client a = client();
        receiver.answer(a.path(), 500);
        link(a, sensor);

        publish(sensor, 1, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(10)).until(() -> receiver.at(a.path()).size() == 1);
        UUID id = UUID.fromString(receiver.at(a.path()).get(0).header("webhook-id"));
        jdbc.update("DELETE FROM client_sensors WHERE client_id = ? AND sensor_id = ?", a.id(), sensor);

        await().atMost(Duration.ofSeconds(10)).until(() -> "cancelled".equals(status(id)));
        assertThat(receiver.at(a.path())).hasSize(1);
    }

    @Test
    void retryAfterOn429IsRespected() {
        String sensor = sensor();
        Client a = client();
        receiver.answerRetryAfter(a.path(), 429, "3");
        link(a, sensor);

        publish(sensor, 1, System.currentTimeMillis());

        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at(a.path()).size() == 2);
        List<Received> attempts = receiver.at(a.path());
        assertThat(attempts.get(1).arrivedAt() - attempts.get(0).arrivedAt()).isGreaterThanOrEqualTo(3000);
    }

    @Test
    void aHangingClientDoesNotDelayTheOthers() {
        String slowSensor = sensor(), fastSensor = sensor();
        Client hanging = client(), fast = client();
        receiver.answer(hanging.path(), WebhookReceiver.HANG);
        link(hanging, slowSensor);
        link(fast, fastSensor);
        long base = System.currentTimeMillis() - 60_000;

        List<Message> slow = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
            slow.add(Readings.reading(slowSensor, i % 2, base + i));
        }
        Readings.publishInOrder(rabbit, ingest.exchange(), slow);
        long[] sentAt = new long[10];
        rabbit.invoke(ops -> { // one channel, so the broker keeps their order
            for (int i = 0; i < 10; i++) {
                sentAt[i] = System.currentTimeMillis();
                ops.send(ingest.exchange(), fastSensor, Readings.reading(fastSensor, i % 2, base + 100 + i));
            }
            return null;
        });

        await().atMost(Duration.ofSeconds(10)).until(() -> receiver.at(fast.path()).size() >= 1);
        // superseding may fold quick successive changes; whatever arrives, arrives within a second of its event
        awaitOrExplain(fast, () -> receiver.at(fast.path()).stream().anyMatch(r -> field(r, "sequence").equals("10")));
        for (Received r : receiver.at(fast.path())) {
            int seq = Integer.parseInt(field(r, "sequence"));
            assertThat(r.arrivedAt() - sentAt[seq - 1]).as("arrival of change %d", seq).isLessThan(1000);
        }
    }

    /** Clients whose next attempts fail to be recorded (with an error that is not waited out), how many times. */
    static final Map<UUID, java.util.concurrent.atomic.AtomicInteger> recordFails = new java.util.concurrent.ConcurrentHashMap<>();

    @Test
    void anAttemptThatCannotBeRecordedGivesItsClientsSlotBack() throws Exception {
        org.apache.camel.builder.AdviceWith.adviceWith(camel, "notification-is-posted-to-its-client", route ->
                route.weaveById("attempt-is-recorded").before().process(exchange -> {
                    Delivery d = exchange.getMessage().getBody(Attempt.class).prepared().dispatch().first();
                    var left = recordFails.get(d.clientId());
                    if (left != null && left.getAndDecrement() > 0) {
                        throw new IllegalStateException("record refused (test)");
                    }
                }));
        Client a = client();
        // more failed records than the client's lane has slots at first (lane.initial-concurrency 4)
        recordFails.put(a.id(), new java.util.concurrent.atomic.AtomicInteger(6));
        List<String> sensors = new java.util.ArrayList<>();
        for (int i = 0; i < 6; i++) {
            sensors.add(sensor());
            link(a, sensors.get(i));
        }
        long ts = System.currentTimeMillis() - 10_000;
        sensors.forEach(s -> publish(s, 1, ts));
        await().atMost(Duration.ofSeconds(20)).until(() -> recordFails.get(a.id()).get() <= 0);

        // their leases run out and they are claimed again; a leaked slot would keep the client from every claim
        awaitOrExplain(a, () -> statuses(a.id()).size() == 6 && statuses(a.id()).stream().allMatch("delivered"::equals));
        assertThat(receiver.at(a.path()).stream().map(r -> field(r, "sensor_id")).distinct()).hasSize(6);
    }

    @Test
    void aLeaseOutlivesTheLongestAttempt(@Autowired WebhookPoster poster, @Autowired NotifyProperties props) {
        // an attempt ends by its deadline, whatever the receiver does (WebhookPosterTest), so no second POST of the
        // same notification can start while the first may still run
        assertThat(poster.deadline()).isEqualTo(Duration.ofMillis(1500));
        assertThat(props.lease()).isGreaterThanOrEqualTo(poster.deadline().plusSeconds(10));
    }

    // --- helpers

    /** Waits; if in vain, says where the client's notifications stand. */
    private void awaitOrExplain(Client c, java.util.concurrent.Callable<Boolean> condition) {
        try {
            await().atMost(Duration.ofSeconds(30)).until(condition);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            throw new AssertionError("events: " + jdbc.queryForList("""
                    SELECT e.sensor_id, e.sequence, e.type FROM sensor_events e
                      JOIN client_sensors cs ON cs.sensor_id = e.sensor_id WHERE cs.client_id = ? ORDER BY e.sequence""",
                    c.id()) + "; client: " + jdbc.queryForList(
                    "SELECT enabled, failing_since, delivery_mode FROM clients WHERE id = ?", c.id())
                    + "; notifications of the client: " + jdbc.queryForList(
                    "SELECT sequence, status, attempts, next_attempt_at, lease_until, last_error FROM notifications WHERE client_id = ? ORDER BY sequence",
                    c.id()) + "; received: " + receiver.at(c.path()).size() + "; in flight: "
                    + jdbc.queryForObject("SELECT count(*) FROM notifications WHERE status = 'delivering'", Integer.class)
                    + "; sensor state: " + jdbc.queryForList("""
                    SELECT st.* FROM sensor_state st JOIN client_sensors cs ON cs.sensor_id = st.sensor_id
                     WHERE cs.client_id = ?""", c.id())
                    + "; readings: " + meters.find("lockwatch.readings.received").counter().count()
                    + " received, " + meters.find("lockwatch.readings.stale").counter().count() + " stale, "
                    + meters.find("lockwatch.readings.duplicate").counter().count() + " duplicate", e);
        }
    }

    private String sensor() {
        String id = "N" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'Moscow, Russia, Svobody st. 23 fl 1 room 16')", id);
        return id;
    }

    private Client client() {
        String path = "/hook-" + UUID.randomUUID();
        String secret = WebhookSigner.newSecret();
        UUID id = jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('test', ?, ?) RETURNING id",
                UUID.class, receiver.url(path), secret);
        return new Client(id, secret, path);
    }

    private UUID clientAt(String url) {
        return jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('test', ?, ?) RETURNING id",
                UUID.class, url, WebhookSigner.newSecret());
    }

    private void link(Client c, String sensor) {
        jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)", c.id(), sensor);
    }

    private void publish(String sensor, int data, long ts) {
        String body = "{\"sensor_id\":\"" + sensor + "\",\"data\":" + data + ",\"ts\":" + ts + "}";
        rabbit.send(ingest.exchange(), sensor, new Message(body.getBytes(StandardCharsets.UTF_8), new MessageProperties()));
    }

    /**
     * Readings of one sensor a second apart from {@code ts}, on one channel: separate sends may take separate
     * channels, whose order the broker does not keep, and a reading older than one applied is stale.
     */
    private void publishSeries(String sensor, long ts, int... data) {
        List<Message> series = new java.util.ArrayList<>();
        for (int i = 0; i < data.length; i++) {
            series.add(Readings.reading(sensor, data[i], ts + 1000L * i));
        }
        Readings.publishInOrder(rabbit, ingest.exchange(), series);
    }

    private List<String> statuses(UUID client) {
        return jdbc.queryForList("SELECT status FROM notifications WHERE client_id = ? ORDER BY sequence", String.class, client);
    }

    private List<String> supersededReasons(UUID client) {
        return jdbc.queryForList("SELECT superseded_reason FROM notifications WHERE client_id = ? AND status = 'superseded' ORDER BY sequence",
                String.class, client);
    }

    private String status(UUID notification) {
        return jdbc.queryForObject("SELECT status FROM notifications WHERE id = ?", String.class, notification);
    }

    private List<String> errors(UUID client) {
        return jdbc.queryForList("SELECT error FROM delivery_attempts WHERE client_id = ? ORDER BY attempted_at", String.class, client);
    }

    private static com.fasterxml.jackson.databind.JsonNode body(Received r) {
        try {
            return JSON.readTree(r.body());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String field(Received r, String name) {
        try {
            return JSON.readTree(r.body()).get(name).asText();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String closedPortUrl() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return "http://127.0.0.1:" + s.getLocalPort() + "/nobody";
        }
    }
}
