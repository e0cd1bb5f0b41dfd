package io.lockwatch.alarms;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.Api.Answer;
import io.lockwatch.testing.Readings;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.NotifyBuilder;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Alarms and escalation where clients meet (issue 54): a client's key names only its own client in a chain and is
 * told nothing of another's, whether it exists or what it was sent; a step client hears the clearing whatever it
 * filters; a step client deleted, or a sensor deleted and registered again, leaves the scan sound. The properties are
 * AlarmEscalationRouteTest's, so that both run in one application context.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "lockwatch.alarms.open-after=1h")
class AlarmsAcrossClientsTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired org.springframework.transaction.support.TransactionTemplate tx;
    @Autowired IngestProperties ingest;
    @Autowired CamelContext camel;
    @LocalServerPort int port;
    Api api;

    @BeforeEach
    void api() {
        // a cold context's first request on a loaded machine can take longer than the 10 s by default
        api = new Api(port, Duration.ofSeconds(30));
    }

    /**
     * Another client's id and a made-up one get the same 400 from a client key, field and detail alike but for the id;
     * its own client is taken; an operator may still name any client, and a chain so set is neither shown to the key
     * nor replaced by it.
     */
    @Test
    void aClientKeyNamesItsOwnClientOnlyInAChainAndConfirmsNoOther() throws Exception {
        String s = sensor(60);
        String a = api.client(receiver, "/own-a"), b = api.client(receiver, "/own-b");
        api.link(a, s);
        api.link(b, s);
        String aAdmin = key(a, "client-admin"), aReader = key(a, "client-read");
        String chain = "/clients/" + a + "/sensors/" + s + "/escalation";
        String madeUp = UUID.randomUUID().toString();

        Answer others = api.call("PUT", chain, aAdmin, steps(b));
        Answer unknown = api.call("PUT", chain, aAdmin, steps(madeUp));
        assertThat(others.status()).as(String.valueOf(others.body())).isEqualTo(400);
        assertThat(unknown.status()).isEqualTo(others.status());
        assertThat(others.body().get("field").asText()).isEqualTo("steps[0].client_id")
                .isEqualTo(unknown.body().get("field").asText());
        assertThat(others.body().get("detail").asText().replace(b, "<id>"))
                .isEqualTo(unknown.body().get("detail").asText().replace(madeUp, "<id>"));
        assertThat(api.call("GET", chain, Api.READER, null).body().get("steps")).as("nothing set").isEmpty();

        Answer own = api.call("PUT", chain, aAdmin, steps(a));
        assertThat(own.status()).as(String.valueOf(own.body())).isEqualTo(200);
        assertThat(own.body().at("/steps/0/client_id").asText()).isEqualTo(a);

        // an operator names whom it likes; the key neither sees that step nor replaces what the operator set
        Answer byOperator = api.call("PUT", chain, Api.ADMIN, Map.of("steps", List.of(
                Map.of("after_seconds", 60, "client_id", a), Map.of("after_seconds", 120, "client_id", b))));
        assertThat(byOperator.status()).as(String.valueOf(byOperator.body())).isEqualTo(200);
        assertThat(api.call("GET", chain, Api.READER, null).body().get("steps").findValuesAsText("client_id"))
                .containsExactly(a, b);
        JsonNode seen = api.call("GET", chain, aReader, null).body();
        assertThat(seen.get("steps").findValuesAsText("client_id")).containsExactly(a);
        assertThat(seen.toString()).doesNotContain(b);
        Answer replace = api.call("PUT", chain, aAdmin, steps(a));
        assertThat(replace.status()).as(String.valueOf(replace.body())).isEqualTo(403);
        assertThat(replace.body().toString()).doesNotContain(b);
        assertThat(api.call("GET", chain, Api.READER, null).body().get("steps").findValuesAsText("client_id"))
                .as("left as the operator set it").containsExactly(a, b);
    }

    /**
     * A sensor linked to A and B, with a chain of its own to an operator's guard and each link's to its client: A's
     * keys see of an alarm only the steps sent to A, of the sensor's chain or A's own, in the alarm, the list and the
     * acknowledgement's answer; the operator sees them all.
     */
    @Test
    void aClientKeyIsShownOnlyItsOwnStepsOfAnAlarm() throws Exception {
        String s = sensor(1);
        String a = api.client(receiver, "/parts-a"), b = api.client(receiver, "/parts-b"),
                guard = api.client(receiver, "/parts-guard");
        api.link(a, s);
        api.link(b, s);
        assertThat(api.call("PUT", "/sensors/" + s + "/escalation", Api.ADMIN, Map.of("steps", List.of(
                Map.of("after_seconds", 3600, "client_id", guard), Map.of("after_seconds", 7200, "client_id", a))))
                .status()).isEqualTo(200);
        assertThat(api.call("PUT", "/clients/" + a + "/sensors/" + s + "/escalation", Api.ADMIN, steps(a)).status())
                .isEqualTo(200);
        assertThat(api.call("PUT", "/clients/" + b + "/sensors/" + s + "/escalation", Api.ADMIN, Map.of("steps", List.of(
                Map.of("after_seconds", 600, "client_id", b), Map.of("after_seconds", 1200, "client_id", a))))
                .status()).isEqualTo(200);
        String aReader = key(a, "client-read"), aAdmin = key(a, "client-admin");

        publish(s, 0, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(15)).until(() -> alarmId(s) != null);
        String alarm = alarmId(s);
        assertThat(api.call("GET", "/alarms/" + alarm, Api.READER, null).body().get("escalation")).hasSize(5);

        JsonNode seen = api.call("GET", "/alarms/" + alarm, aReader, null).body();
        assertOnlyAsOwn(seen, a, b, guard);
        JsonNode listed = api.call("GET", "/alarms?sensor_id=" + s, aReader, null).body();
        assertThat(listed.get("items")).hasSize(1);
        assertOnlyAsOwn(listed.get("items").get(0), a, b, guard);
        Answer acknowledged = api.call("POST", "/alarms/" + alarm + "/acknowledge", aAdmin, Map.of("by", "Anna"));
        assertThat(acknowledged.status()).as(String.valueOf(acknowledged.body())).isEqualTo(200);
        assertOnlyAsOwn(acknowledged.body(), a, b, guard);
    }

    /** The steps an alarm shows A: the sensor's step to A and A's own chain's, nothing naming B or the guard. */
    private static void assertOnlyAsOwn(JsonNode alarm, String a, String b, String guard) {
        JsonNode steps = alarm.get("escalation");
        assertThat(steps.findValuesAsText("client_id")).containsExactly(a, a);
        assertThat(steps.get(0).get("chain_client_id").isNull()).as("the sensor's step 2").isTrue();
        assertThat(steps.get(0).get("step").asInt()).isEqualTo(2);
        assertThat(steps.get(1).get("chain_client_id").asText()).isEqualTo(a);
        assertThat(alarm.toString()).doesNotContain(b).doesNotContain(guard);
    }

    /**
     * A client linked to a critical sensor and asking for minor alarms only is its chain's step: it hears the
     * escalation and the clearing. One told of the raising hears the clearing though its filter changed since.
     */
    @Test
    void aStepClientHearsTheClearingWhateverItsFilters() throws Exception {
        String s = sensor(1);
        jdbc.update("UPDATE sensors SET open_alarm_severity = 'critical' WHERE id = ?", s);
        String minorOnly = api.client(receiver, "/minor-only", Map.of("alarm_severities", List.of("minor")));
        String wasCritical = api.client(receiver, "/was-critical", Map.of("alarm_severities", List.of("critical"),
                "event_types", List.of("sensor.alarm_raised", "sensor.alarm_cleared")));
        api.link(minorOnly, s);
        api.link(wasCritical, s);
        assertThat(api.call("PUT", "/sensors/" + s + "/escalation", Api.ADMIN, steps(minorOnly, 1)).status()).isEqualTo(200);

        publish(s, 0, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(20)).until(() -> receiver.at("/minor-only").stream()
                .anyMatch(r -> r.body().contains("sensor.alarm_escalated")) && !receiver.at("/was-critical").isEmpty());
        assertThat(api.call("PUT", "/clients/" + wasCritical, Api.ADMIN, Map.of("alarm_severities", List.of("minor")))
                .status()).isEqualTo(200);
        publish(s, 1, System.currentTimeMillis());

        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at("/minor-only").stream()
                .anyMatch(r -> r.body().contains("sensor.alarm_cleared")));
        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at("/was-critical").size() == 2);
        assertThat(Api.bodies(receiver, "/was-critical")).extracting(n -> n.get("type").asText())
                .containsExactly("sensor.alarm_raised", "sensor.alarm_cleared");
        assertThat(Api.bodies(receiver, "/minor-only")).extracting(n -> n.get("type").asText())
                .as("the door's state changes as it asked, the alarm as its step").contains("sensor.alarm_escalated",
                        "sensor.alarm_cleared").doesNotContain("sensor.alarm_raised");
    }

    /**
     * A step's client deleted after the alarm was raised: its step is stopped when due, not sent to nobody as an event
     * of the sensor; the next step still goes.
     */
    @Test
    void aStepWhoseClientWasDeletedIsStoppedNotSent() throws Exception {
        String s = sensor(1);
        String gone = api.client(receiver, "/gone"), next = api.client(receiver, "/next");
        assertThat(api.call("PUT", "/sensors/" + s + "/escalation", Api.ADMIN, Map.of("steps", List.of(
                Map.of("after_seconds", 2, "client_id", gone), Map.of("after_seconds", 3, "client_id", next))))
                .status()).isEqualTo(200);
        publish(s, 0, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(15)).until(() -> alarmId(s) != null);
        assertThat(api.call("DELETE", "/clients/" + gone, Api.ADMIN, null).status()).isEqualTo(204);

        await().atMost(Duration.ofSeconds(20)).until(() -> !receiver.at("/next").isEmpty());
        JsonNode steps = api.call("GET", "/alarms/" + alarmId(s), Api.READER, null).body().get("escalation");
        assertThat(steps.findValuesAsText("state")).containsExactly("stopped", "sent");
        assertThat(jdbc.queryForList("SELECT escalation_step FROM sensor_events WHERE sensor_id = ? AND type = ?",
                Integer.class, s, "sensor.alarm_escalated")).containsExactly(2);
        assertThat(Api.bodies(receiver, "/next").get(0).at("/alarm/escalation_step").asInt()).isEqualTo(2);
    }

    /**
     * A sensor deleted and registered again between two scans, while its alarm is active: the old alarm is closed
     * with the old registration's last event, its clearing (the new registration numbers after it), its steps
     * stopped, and the scan goes on raising the alarms of others.
     */
    @Test
    void aSensorRegisteredAgainLeavesItsOldAlarmClosedAndTheScanSound() throws Exception {
        String s = sensor(1);
        String guard = api.client(receiver, "/again-guard");
        assertThat(api.call("PUT", "/sensors/" + s + "/escalation", Api.ADMIN, steps(guard, 3600)).status()).isEqualTo(200);
        publish(s, 0, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(15)).until(() -> alarmId(s) != null);
        String old = alarmId(s);
        long eventsBefore = events(s);

        // both in one transaction: no scan sees the sensor gone in between
        tx.executeWithoutResult(status -> {
            jdbc.update("DELETE FROM sensors WHERE id = ?", s);
            jdbc.update("INSERT INTO sensors (id, address, open_alarm_seconds) VALUES (?, 'door', 1)", s);
        });

        await().atMost(Duration.ofSeconds(15)).until(() -> jdbc.queryForObject(
                "SELECT cleared_at IS NOT NULL FROM alarms WHERE id = ?::uuid", Boolean.class, old));
        assertThat(events(s)).as("the old registration's clearing, its last event").isEqualTo(eventsBefore + 1);
        assertThat(jdbc.queryForObject("SELECT sequence FROM sensor_events WHERE alarm_id = ?::uuid AND type = ?",
                Long.class, old, "sensor.alarm_cleared")).as("the new registration goes on after it")
                .isEqualTo(jdbc.queryForObject("SELECT sequence FROM sensor_state WHERE sensor_id = ?", Long.class, s));
        assertThat(api.call("GET", "/alarms/" + old, Api.READER, null).body().at("/escalation/0/state").asText())
                .isEqualTo("stopped");
        String other = sensor(1);
        publish(other, 0, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(15)).until(() -> alarmId(other) != null);
    }

    /**
     * A sensor deleted while its alarm is active: the clients told of the alarm hear that it ended, its step's client
     * (sent a step, not linked) and the linked one told of the raising, though the sensor and its links are gone.
     */
    @Test
    void aSensorDeletedWithItsAlarmActiveEndsTheAlarmForThoseToldOfIt() throws Exception {
        String s = sensor(1);
        String guard = api.client(receiver, "/deleted-guard"), linked = api.client(receiver, "/deleted-linked");
        api.link(linked, s);
        assertThat(api.call("PUT", "/sensors/" + s + "/escalation", Api.ADMIN, steps(guard, 1)).status()).isEqualTo(200);
        publish(s, 0, System.currentTimeMillis());
        await().atMost(Duration.ofSeconds(20)).until(() -> !receiver.at("/deleted-guard").isEmpty()
                && receiver.at("/deleted-linked").stream().anyMatch(r -> r.body().contains("sensor.alarm_raised")));
        String alarm = alarmId(s);

        assertThat(api.call("DELETE", "/sensors/" + s, Api.ADMIN, null).status()).isEqualTo(204);

        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at("/deleted-guard").size() == 2
                && receiver.at("/deleted-linked").stream().anyMatch(r -> r.body().contains("sensor.alarm_cleared")));
        JsonNode cleared = Api.bodies(receiver, "/deleted-guard").get(1);
        assertThat(cleared.get("type").asText()).isEqualTo("sensor.alarm_cleared");
        assertThat(cleared.at("/alarm/id").asText()).isEqualTo(alarm);
        assertThat(Api.bodies(receiver, "/deleted-linked")).extracting(n -> n.get("type").asText())
                .filteredOn(type -> type.startsWith("sensor.alarm"))
                .containsExactly("sensor.alarm_raised", "sensor.alarm_cleared");
    }

    private long events(String sensor) {
        return jdbc.queryForObject("SELECT count(*) FROM sensor_events WHERE sensor_id = ?", Long.class, sensor);
    }

    private Map<String, Object> steps(String client) {
        return steps(client, 60);
    }

    private static Map<String, Object> steps(String client, int afterSeconds) {
        return Map.of("steps", List.of(Map.of("after_seconds", afterSeconds, "client_id", client)));
    }

    private String key(String client, String role) throws Exception {
        Answer made = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", role, "role", role));
        assertThat(made.status()).as(String.valueOf(made.body())).isEqualTo(201);
        return made.body().get("token").asText();
    }

    private String sensor(int openAlarmSeconds) {
        String id = "X" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address, open_alarm_seconds) VALUES (?, 'door', ?)", id, openAlarmSeconds);
        return id;
    }

    private void publish(String sensor, int data, long ts) {
        rabbit.send(ingest.exchange(), sensor, Readings.reading(sensor, data, ts));
    }

    private String alarmId(String sensor) {
        List<String> ids = jdbc.queryForList("SELECT id::text FROM alarms WHERE sensor_id = ? ORDER BY raised_at DESC",
                String.class, sensor);
        return ids.isEmpty() ? null : ids.get(0);
    }
}
