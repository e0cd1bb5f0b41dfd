package io.lockwatch.alarms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.heartbeat.HeartbeatProperties;
import io.lockwatch.infra.tracing.Traces;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.ingest.ReadingsBacklog;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.Api.Answer;
import io.lockwatch.testing.Readings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.NotifyBuilder;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Escalation chains on the embedded default, with a scan every half second: steps in order at their delays to their
 * own clients only, none after an acknowledgement (also one that races the step), each step once however many scans
 * and instances run at once, and the severity in the webhook and the alarm's resource.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "lockwatch.alarms.open-after=1h")
class AlarmEscalationRouteTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    static final ObjectMapper JSON = new ObjectMapper();

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired TransactionTemplate tx;
    @Autowired IngestProperties ingest;
    @Autowired AlarmScan alarms;
    @Autowired AlarmStore store;
    @Autowired AlarmProperties props;
    @Autowired ReadingsBacklog backlog;
    @Autowired HeartbeatProperties heartbeat;
    @Autowired Traces traces;
    @Autowired CamelContext camel;
    @LocalServerPort int port;
    Api api;

    @org.junit.jupiter.api.BeforeEach
    void api() {
        api = new Api(port);
    }

    @Test
    void eachStepReachesItsOwnClientAtItsDelayInOrderWithTheSeverity() throws Exception {
        String s = sensor(1);
        String linked = api.client(receiver, "/linked"), guard = api.client(receiver, "/guard"), manager = api.client(receiver, "/manager");
        api.link(linked, s);
        assertThat(api.call("PUT", "/sensors/" + s, "test-admin-token", Map.of("open_alarm_severity", "critical")).status())
                .isEqualTo(200);
        Answer chain = api.call("PUT", "/sensors/" + s + "/escalation", "test-admin-token", Map.of("steps", List.of(
                Map.of("after_seconds", 1, "client_id", guard), Map.of("after_seconds", 3, "client_id", manager))));
        assertThat(chain.status()).as(String.valueOf(chain.body())).isEqualTo(200);
        assertThat(chain.body().get("steps").findValuesAsText("step")).containsExactly("1", "2");

        publish(s, 0, System.currentTimeMillis());

        await().atMost(Duration.ofSeconds(20)).until(() -> receiver.at("/manager").size() == 1);
        JsonNode toGuard = JSON.readTree(receiver.at("/guard").get(0).body());
        JsonNode toManager = JSON.readTree(receiver.at("/manager").get(0).body());
        assertThat(toGuard.get("type").asText()).isEqualTo("sensor.alarm_escalated");
        assertThat(toGuard.at("/alarm/escalation_step").asInt()).isEqualTo(1);
        assertThat(toManager.at("/alarm/escalation_step").asInt()).isEqualTo(2);
        assertThat(toGuard.at("/alarm/severity").asText()).isEqualTo("critical");
        assertThat(toManager.get("sequence").asLong()).isGreaterThan(toGuard.get("sequence").asLong());

        // each step's delay counts from when the alarm was recorded, at or after its nominal raising
        Instant raised = Instant.parse(toGuard.at("/alarm/raised_at").asText());
        JsonNode steps = api.call("GET", "/alarms/" + toGuard.at("/alarm/id").asText(), "test-read-token", null).body()
                .get("escalation");
        Instant due1 = Instant.parse(steps.get(0).get("due_at").asText()), due2 = Instant.parse(steps.get(1).get("due_at").asText());
        assertThat(due1).isAfterOrEqualTo(raised.plusSeconds(1));
        assertThat(java.time.Duration.between(due1, due2)).isEqualTo(Duration.ofSeconds(2));
        assertThat(receiver.at("/guard").get(0).arrivedAt()).as("not before its delay").isGreaterThanOrEqualTo(due1.toEpochMilli());
        assertThat(receiver.at("/manager").get(0).arrivedAt()).isGreaterThanOrEqualTo(due2.toEpochMilli());
        assertThat(receiver.at("/guard")).hasSize(1);
        // the linked client hears of the alarm, not of its escalation
        await().atMost(Duration.ofSeconds(10)).until(() -> receiver.at("/linked").size() >= 2);
        assertThat(Api.bodies(receiver, "/linked")).extracting(b -> b.get("type").asText())
                .containsExactly("sensor.state_changed", "sensor.alarm_raised");
        assertThat(Api.bodies(receiver, "/linked").get(1).at("/alarm/severity").asText()).isEqualTo("critical");

        JsonNode alarm = api.call("GET", "/alarms/" + toGuard.at("/alarm/id").asText(), "test-read-token", null).body();
        assertThat(alarm.get("severity").asText()).isEqualTo("critical");
        assertThat(alarm.get("escalation")).hasSize(2);
        assertThat(alarm.get("escalation").findValuesAsText("state")).containsExactly("sent", "sent");
        assertThat(alarm.get("escalation").get(1).get("client_id").asText()).isEqualTo(manager);
        assertThat(Instant.parse(alarm.get("escalation").get(0).get("sent_at").asText())).isAfterOrEqualTo(due1);
    }

    /**
     * A linked client's own chain runs beside the sensor's, its step marked as of that client's chain; the clients
     * sent a step hear the clearing though not linked; unlinking removes the link's chain.
     */
    @Test
    void aLinksOwnChainRunsBesideTheSensorsAndItsStepClientsHearTheClearing() throws Exception {
        String s = sensor(1);
        String tenant = api.client(receiver, "/tenant"), onCall = api.client(receiver, "/on-call"),
                nightGuard = api.client(receiver, "/night-guard");
        assertThat(api.call("GET", "/clients/" + tenant + "/sensors/" + s + "/escalation", "test-read-token", null).status())
                .as("not linked: no chain").isEqualTo(404);
        api.link(tenant, s);
        api.call("PUT", "/sensors/" + s + "/escalation", "test-admin-token",
                Map.of("steps", List.of(Map.of("after_seconds", 1, "client_id", nightGuard))));
        Answer chain = api.call("PUT", "/clients/" + tenant + "/sensors/" + s + "/escalation", "test-admin-token",
                Map.of("steps", List.of(Map.of("after_seconds", 2, "client_id", onCall))));
        assertThat(chain.status()).as(String.valueOf(chain.body())).isEqualTo(200);
        assertThat(chain.body().at("/steps/0/client_id").asText()).isEqualTo(onCall);
        assertThat(api.call("PUT", "/clients/" + tenant + "/sensors/" + s + "/escalation", "test-read-token",
                Map.of("steps", List.of())).status()).isEqualTo(403);

        publish(s, 0, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(20)).until(() -> !receiver.at("/on-call").isEmpty() && !receiver.at("/night-guard").isEmpty());
        JsonNode toOnCall = Api.bodies(receiver, "/on-call").get(0), toGuard = Api.bodies(receiver, "/night-guard").get(0);
        assertThat(toOnCall.get("type").asText()).isEqualTo("sensor.alarm_escalated");
        assertThat(toOnCall.at("/alarm/escalation_step").asInt()).isEqualTo(1);
        assertThat(toOnCall.at("/alarm/escalation_chain_client_id").asText()).isEqualTo(tenant);
        assertThat(toGuard.at("/alarm/escalation_step").asInt()).isEqualTo(1);
        assertThat(toGuard.at("/alarm").has("escalation_chain_client_id")).as("the sensor's own chain").isFalse();
        assertThat(toOnCall.get("sequence").asLong()).isGreaterThan(toGuard.get("sequence").asLong());
        JsonNode steps = api.call("GET", "/alarms/" + toGuard.at("/alarm/id").asText(), "test-read-token", null).body()
                .get("escalation");
        assertThat(steps).hasSize(2);
        assertThat(steps.get(0).get("chain_client_id").isNull()).isTrue();
        assertThat(steps.get(1).get("chain_client_id").asText()).isEqualTo(tenant);
        assertThat(steps.findValuesAsText("state")).containsExactly("sent", "sent");

        publish(s, 1, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at("/on-call").size() == 2 && receiver.at("/night-guard").size() == 2);
        assertThat(Api.bodies(receiver, "/on-call").get(1).get("type").asText()).isEqualTo("sensor.alarm_cleared");
        assertThat(Api.bodies(receiver, "/night-guard").get(1).get("type").asText()).isEqualTo("sensor.alarm_cleared");
        assertThat(Api.bodies(receiver, "/on-call")).extracting(b -> b.get("type").asText())
                .as("not linked: no state change").doesNotContain("sensor.state_changed");

        assertThat(api.call("DELETE", "/clients/" + tenant + "/sensors/" + s, "test-admin-token", null).status()).isEqualTo(204);
        assertThat(api.call("GET", "/clients/" + tenant + "/sensors/" + s + "/escalation", "test-read-token", null).status())
                .isEqualTo(404);
        api.link(tenant, s);
        assertThat(api.call("GET", "/clients/" + tenant + "/sensors/" + s + "/escalation", "test-read-token", null).body()
                .get("steps")).as("unlinking removed it").isEmpty();
    }

    @Test
    void anAcknowledgedAlarmIsNeverEscalated() throws Exception {
        String s = sensor(1);
        String guard = api.client(receiver, "/never");
        api.call("PUT", "/sensors/" + s + "/escalation", "test-admin-token",
                Map.of("steps", List.of(Map.of("after_seconds", 3, "client_id", guard))));
        publish(s, 0, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(15)).until(() -> alarmId(s) != null);

        assertThat(api.call("POST", "/alarms/" + alarmId(s) + "/acknowledge", "test-admin-token", Map.of("by", "Anna")).status())
                .isEqualTo(200);

        // its step due now, not in 3 s, with scans after that: an acknowledged alarm's due step is not sent
        jdbc.update("UPDATE alarm_escalations SET due_at = now() - interval '1 second' WHERE alarm_id = ?::uuid", alarmId(s));
        NotifyBuilder twoScans = new NotifyBuilder(camel).fromRoute("alarms-are-raised-cleared-and-escalated").whenCompleted(2).create();
        assertThat(twoScans.matches(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(receiver.at("/never")).isEmpty();
        JsonNode step = api.call("GET", "/alarms/" + alarmId(s), "test-read-token", null).body().get("escalation").get(0);
        assertThat(step.get("state").asText()).isEqualTo("stopped");
        assertThat(step.get("sent_at").isNull()).isTrue();
    }

    /**
     * A step whose POST is on the wire as its alarm is acknowledged cannot be called back; but when that attempt fails,
     * it is not tried again after the acknowledgement.
     */
    @Test
    void aStepInFlightAtTheAcknowledgementIsNotRetriedAfterIt() throws Exception {
        String s = sensor(1);
        String guard = api.client(receiver, "/in-flight");
        receiver.delay("/in-flight", 2000);
        receiver.answer("/in-flight", 500);
        api.call("PUT", "/sensors/" + s + "/escalation", "test-admin-token",
                Map.of("steps", List.of(Map.of("after_seconds", 1, "client_id", guard))));
        publish(s, 0, System.currentTimeMillis());
        String step = "SELECT n.status FROM notifications n JOIN sensor_events e ON e.id = n.event_id "
                + "WHERE e.sensor_id = ? AND e.type = 'sensor.alarm_escalated'";
        await().atMost(Duration.ofSeconds(20)).until(() -> jdbc.queryForList(step, String.class, s).contains("delivering"));

        assertThat(api.call("POST", "/alarms/" + alarmId(s) + "/acknowledge", "test-admin-token", Map.of("by", "Anna")).status())
                .isEqualTo(200);
        assertThat(jdbc.queryForList(step, String.class, s)).as("on the wire: left to its answer").containsExactly("delivering");

        // its attempt fails after the acknowledgement; the retry comes due at once and finds the alarm acknowledged
        await().atMost(Duration.ofSeconds(10)).until(() -> !jdbc.queryForList(step, String.class, s).contains("delivering"));
        receiver.answer("/in-flight", 200);
        jdbc.update("UPDATE notifications n SET next_attempt_at = now() FROM sensor_events e "
                + "WHERE e.id = n.event_id AND e.sensor_id = ? AND n.status = 'pending'", s);
        await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.queryForList(step, String.class, s).equals(List.of("cancelled")));
        assertThat(receiver.at("/in-flight")).as("the one attempt on the wire, none after").hasSize(1);
    }

    /**
     * 300 alarms whose step falls due while they are acknowledged, by four threads at once, as scans run: each step
     * was sent before its acknowledgement or not at all, and nothing of a sent one waits to go after it.
     */
    @Test
    void anAcknowledgementThatRacesTheStepStopsItOrComesAfterIt() throws Exception {
        String prefix = bulk(300, 1);
        List<UUID> ids = jdbc.queryForList("SELECT id FROM alarms WHERE sensor_id LIKE ?", UUID.class, prefix + "%");
        assertThat(ids).hasSize(300);
        jdbc.update("UPDATE alarm_escalations SET due_at = now() WHERE alarm_id = ANY (?::uuid[])", (Object) ids.toArray(UUID[]::new));

        ExecutorService pool = Executors.newFixedThreadPool(5);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                int from = t;
                work.add(pool.submit(() -> {
                    for (int i = from; i < ids.size(); i += 4) {
                        store.acknowledge(ids.get(i), "racer", null);
                    }
                }));
            }
            work.add(pool.submit((Callable<Integer>) alarms::scan));
            for (Future<?> f : work) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }

        // a step's POST already on the wire at its acknowledgement is left to its answer
        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject("""
                SELECT count(*) FROM notifications n JOIN sensor_events e ON e.id = n.event_id
                 WHERE e.sensor_id LIKE ? AND n.status = 'delivering'""", Integer.class, prefix + "%") == 0);
        List<Map<String, Object>> steps = jdbc.queryForList("""
                SELECT e.sent_at, e.stopped_at, a.acknowledged_at FROM alarm_escalations e JOIN alarms a ON a.id = e.alarm_id
                 WHERE a.sensor_id LIKE ?""", prefix + "%");
        assertThat(steps).hasSize(300).allSatisfy(step -> {
            assertThat(step.get("acknowledged_at")).isNotNull();
            assertThat(step.get("sent_at") == null).as("sent or stopped, not both: %s", step)
                    .isEqualTo(step.get("stopped_at") != null);
            if (step.get("sent_at") != null) {
                assertThat((java.sql.Timestamp) step.get("sent_at")).isBeforeOrEqualTo((java.sql.Timestamp) step.get("acknowledged_at"));
            }
        });
        assertThat(jdbc.queryForObject("""
                SELECT count(*) FROM notifications n JOIN sensor_events e ON e.id = n.event_id
                 WHERE e.sensor_id LIKE ? AND e.type = 'sensor.alarm_escalated' AND n.status = 'pending'""",
                Integer.class, prefix + "%")).as("nothing of a sent step waits to go after the acknowledgement").isZero();
    }

    /**
     * 500 alarms with two steps each, both due: four scans at once on this instance and two on another (its own
     * AlarmScan on the same database) send each step once, each its own sequence of its sensor, in step order.
     */
    @Test
    void eachStepIsSentOnceByScansAtOnceOnTwoInstances() throws Exception {
        String prefix = bulk(500, 2);
        jdbc.update("UPDATE alarm_escalations SET due_at = now() - interval '10 seconds' + interval '1 second' * step "
                + "WHERE alarm_id IN (SELECT id FROM alarms WHERE sensor_id LIKE ?)", prefix + "%");
        AlarmScan otherInstance = new AlarmScan(jdbc, tx, props, backlog, heartbeat, new SimpleMeterRegistry(), traces);

        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<Integer>> scans = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                scans.add(pool.submit((Callable<Integer>) (i < 4 ? alarms : otherInstance)::scan));
            }
            for (Future<Integer> f : scans) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        // a step skipped as locked by one scan is the next scan's
        await().atMost(Duration.ofSeconds(15)).until(() -> jdbc.queryForObject("""
                SELECT count(*) FROM alarm_escalations e JOIN alarms a ON a.id = e.alarm_id
                 WHERE a.sensor_id LIKE ? AND e.sent_at IS NOT NULL""", Integer.class, prefix + "%") == 1000);

        assertThat(jdbc.queryForObject("""
                SELECT count(*) FROM sensor_events WHERE sensor_id LIKE ? AND type = 'sensor.alarm_escalated'""",
                Integer.class, prefix + "%")).isEqualTo(1000);
        assertThat(jdbc.queryForObject("""
                SELECT count(*) FROM notifications n JOIN sensor_events e ON e.id = n.event_id
                 WHERE e.sensor_id LIKE ? AND e.type = 'sensor.alarm_escalated'""", Integer.class, prefix + "%")).isEqualTo(1000);
        // per sensor: raised at 2, then step 1 at 3 and step 2 at 4, and the state's sequence is the last of them
        assertThat(jdbc.queryForObject("""
                SELECT count(*) FROM sensor_events e
                 WHERE e.sensor_id LIKE ? AND e.type = 'sensor.alarm_escalated' AND e.sequence <> 2 + e.escalation_step""",
                Integer.class, prefix + "%")).isZero();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensor_state WHERE sensor_id LIKE ? AND sequence = 4",
                Integer.class, prefix + "%")).isEqualTo(500);
    }

    @Test
    void aClientHearsTheAlarmsOfTheSeveritiesItAskedFor() throws Exception {
        String major = sensor(1), critical = sensor(1);
        jdbc.update("UPDATE sensors SET open_alarm_severity = 'critical' WHERE id = ?", critical);
        Answer created = api.call("POST", "/clients", "test-admin-token", Map.of("name", "critical only",
                "url", receiver.url("/critical-only"), "alarm_severities", List.of("critical"),
                "event_types", List.of("sensor.alarm_raised")));
        assertThat(created.status()).as(String.valueOf(created.body())).isEqualTo(201);
        assertThat(created.body().at("/alarm_severities/0").asText()).isEqualTo("critical");
        String onlyCritical = created.body().get("id").asText();
        api.link(onlyCritical, major);
        api.link(onlyCritical, critical);

        publish(major, 0, System.currentTimeMillis());
        publish(critical, 0, System.currentTimeMillis());

        await().atMost(Duration.ofSeconds(15)).until(() -> alarmId(major) != null && alarmId(critical) != null
                && !receiver.at("/critical-only").isEmpty());
        NotifyBuilder twoScans = new NotifyBuilder(camel).fromRoute("alarms-are-raised-cleared-and-escalated").whenCompleted(2).create();
        assertThat(twoScans.matches(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(Api.bodies(receiver, "/critical-only")).extracting(b -> b.get("sensor_id").asText()).containsExactly(critical);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM notifications WHERE sensor_id = ?::text AND client_id = ?::uuid",
                Integer.class, major, onlyCritical)).isZero();
    }

    /**
     * A door open within its expected-open range raises nothing, its deadline put at the range's end plus its
     * threshold; with the schedule taken away it is due its threshold after it opened, and raised.
     */
    @Test
    void aDoorOpenWithinItsExpectedRangeRaisesNothingUntilTheScheduleIsGone() throws Exception {
        String s = sensor(1);
        java.time.ZonedDateTime now = java.time.ZonedDateTime.now(java.time.ZoneOffset.UTC);
        String from = now.minusHours(1).toLocalTime().withSecond(0).withNano(0).toString().substring(0, 5);
        java.time.ZonedDateTime end = now.plusHours(2).withSecond(0).withNano(0);
        Answer set = api.call("PUT", "/sensors/" + s + "/open-schedule", "test-admin-token", Map.of("time_zone", "UTC",
                "ranges", List.of(Map.of("days", List.of("mon", "tue", "wed", "thu", "fri", "sat", "sun"), "from", from,
                        "to", end.toLocalTime().toString().substring(0, 5)))));
        assertThat(set.status()).as(String.valueOf(set.body())).isEqualTo(200);
        assertThat(set.body().get("time_zone").asText()).isEqualTo("UTC");

        publish(s, 0, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(15)).until(() -> {
            java.sql.Timestamp due = jdbc.queryForObject("SELECT alarm_due_at FROM sensor_state WHERE sensor_id = ?",
                    java.sql.Timestamp.class, s);
            return due != null && due.toInstant().equals(end.toInstant().plusSeconds(1));
        });
        NotifyBuilder scans = new NotifyBuilder(camel).fromRoute("alarms-are-raised-cleared-and-escalated").whenCompleted(3).create();
        assertThat(scans.matches(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(alarmId(s)).as("expected open: no alarm").isNull();

        assertThat(api.call("DELETE", "/sensors/" + s + "/open-schedule", "test-admin-token", null).status()).isEqualTo(204);
        await().atMost(Duration.ofSeconds(15)).until(() -> alarmId(s) != null);
        assertThat(jdbc.queryForObject("SELECT threshold_seconds FROM alarms WHERE sensor_id = ?", Integer.class, s)).isEqualTo(1);
        assertThat(api.call("GET", "/sensors/" + s + "/open-schedule", "test-read-token", null).status()).isEqualTo(404);
    }

    @Test
    void aScheduleIsCheckedAndReadBack() throws Exception {
        String s = sensor(60);
        Map<String, Object> weekdays = Map.of("days", List.of("mon", "tue", "wed", "thu", "fri"), "from", "08:00", "to", "19:00");
        Answer badZone = api.call("PUT", "/sensors/" + s + "/open-schedule", "test-admin-token",
                Map.of("time_zone", "Mars/Olympus", "ranges", List.of(weekdays)));
        assertThat(badZone.status()).isEqualTo(400);
        assertThat(badZone.body().get("field").asText()).isEqualTo("time_zone");
        Answer always = api.call("PUT", "/sensors/" + s + "/open-schedule", "test-admin-token", Map.of("time_zone", "Europe/Moscow",
                "ranges", List.of(Map.of("days", List.of("mon", "tue", "wed", "thu", "fri", "sat", "sun"), "from", "00:00",
                        "to", "24:00"))));
        assertThat(always.status()).isEqualTo(400);
        assertThat(always.body().get("detail").asText()).contains("every moment");
        assertThat(api.call("PUT", "/sensors/" + s + "/open-schedule", "test-admin-token", Map.of("time_zone", "Europe/Moscow",
                "ranges", List.of(Map.of("days", List.of("mon"), "from", "25:00", "to", "19:00")))).status()).isEqualTo(400);
        assertThat(api.call("PUT", "/sensors/" + s + "/open-schedule", "test-read-token",
                Map.of("time_zone", "Europe/Moscow", "ranges", List.of(weekdays))).status()).isEqualTo(403);

        Answer set = api.call("PUT", "/sensors/" + s + "/open-schedule", "test-admin-token", Map.of("time_zone", "Europe/Moscow",
                "ranges", List.of(weekdays, Map.of("days", List.of("sat"), "from", "10:00", "to", "24:00"))));
        assertThat(set.status()).as(String.valueOf(set.body())).isEqualTo(200);
        JsonNode read = api.call("GET", "/sensors/" + s + "/open-schedule", "test-read-token", null).body();
        assertThat(read.get("time_zone").asText()).isEqualTo("Europe/Moscow");
        assertThat(read.at("/ranges/0/days").findValuesAsText("")).isEmpty();
        assertThat(read.at("/ranges/0/from").asText() + "-" + read.at("/ranges/0/to").asText()).isEqualTo("08:00-19:00");
        assertThat(read.at("/ranges/1/to").asText()).isEqualTo("24:00");
        assertThat(api.call("PUT", "/sensors/NoSuch1/open-schedule", "test-admin-token",
                Map.of("time_zone", "UTC", "ranges", List.of(weekdays))).status()).isEqualTo(404);
    }

    @Test
    void aChainIsCheckedAndReadBack() throws Exception {
        String s = sensor(60);
        String guard = api.client(receiver, "/checked");
        assertThat(api.call("GET", "/sensors/" + s + "/escalation", "test-read-token", null).body().get("steps")).isEmpty();
        Answer notIncreasing = api.call("PUT", "/sensors/" + s + "/escalation", "test-admin-token", Map.of("steps", List.of(
                Map.of("after_seconds", 60, "client_id", guard), Map.of("after_seconds", 60, "client_id", guard))));
        assertThat(notIncreasing.status()).isEqualTo(400);
        assertThat(notIncreasing.body().get("field").asText()).isEqualTo("steps[1].after_seconds");
        Answer unknown = api.call("PUT", "/sensors/" + s + "/escalation", "test-admin-token", Map.of("steps", List.of(
                Map.of("after_seconds", 60, "client_id", UUID.randomUUID().toString()))));
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.body().get("field").asText()).isEqualTo("steps[0].client_id");
        assertThat(api.call("PUT", "/sensors/" + s + "/escalation", "test-read-token", Map.of("steps", List.of())).status())
                .isEqualTo(403);
        assertThat(api.call("GET", "/sensors/nosuch" + "0/escalation", "test-read-token", null).status()).isEqualTo(404);

        assertThat(api.call("PUT", "/sensors/" + s + "/escalation", "test-admin-token", Map.of("steps", List.of(
                Map.of("after_seconds", 300, "client_id", guard)))).status()).isEqualTo(200);
        JsonNode read = api.call("GET", "/sensors/" + s + "/escalation", "test-read-token", null).body();
        assertThat(read.at("/steps/0/after_seconds").asInt()).isEqualTo(300);
        assertThat(read.at("/steps/0/client_id").asText()).isEqualTo(guard);
        assertThat(api.call("PUT", "/sensors/" + s + "/escalation", "test-admin-token", Map.of("steps", List.of())).body()
                .get("steps")).isEmpty();
    }

    /**
     * {@code n} sensors with a chain of {@code steps} steps (after half an hour and more: not due), each door open
     * for an hour, their alarms raised by one scan. Returns their ids' prefix.
     */
    private String bulk(int n, int steps) throws Exception {
        String prefix = "E" + UUID.randomUUID().toString().replace("-", "").substring(0, 6);
        String guard = api.client(receiver, "/bulk-" + prefix);
        jdbc.update("INSERT INTO sensors (id, address, open_alarm_seconds) "
                + "SELECT ? || lpad(g::text, 5, '0'), 'bulk', 1800 FROM generate_series(1, ?) g", prefix, n);
        jdbc.update("""
                INSERT INTO sensor_escalation_steps (sensor_id, step, after_seconds, client_id)
                SELECT s.id, k, 1800 * (k + 1), ?::uuid FROM sensors s, generate_series(1, ?) k WHERE s.id LIKE ?""",
                guard, steps, prefix + "%");
        jdbc.update("""
                UPDATE sensor_state SET state = 0, sequence = 1, connectivity = 'online',
                       state_changed_at = now() - interval '1 hour', last_seen_at = now(),
                       lost_deadline = now() + interval '1 hour', alarm_due_at = now() - interval '30 minutes'
                 WHERE sensor_id LIKE ?""", prefix + "%");
        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM alarm_escalations e JOIN alarms a ON a.id = e.alarm_id WHERE a.sensor_id LIKE ?",
                Integer.class, prefix + "%") == n * steps);
        return prefix;
    }

    private String sensor(int openAlarmSeconds) {
        String id = "E" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address, open_alarm_seconds) VALUES (?, 'door', ?)", id, openAlarmSeconds);
        return id;
    }

    private void publish(String sensor, int data, long ts) {
        rabbit.send(ingest.exchange(), sensor, Readings.reading(sensor, data, ts));
    }

    private String alarmId(String sensor) {
        List<String> ids = jdbc.queryForList("SELECT id::text FROM alarms WHERE sensor_id = ?", String.class, sensor);
        return ids.isEmpty() ? null : ids.get(0);
    }
}
