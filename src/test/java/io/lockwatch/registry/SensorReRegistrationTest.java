package io.lockwatch.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.devices.Devices;
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
 * A sensor's identity is its registration (issue 54): a sensor deleted with everything that touches it (a link, an
 * escalation chain, a credential, an alarm, a lost connection and an alarm a maintenance window holds) and registered
 * again under its id is a new sensor. Nothing of the old one reaches it, and its events go on with the id's numbering.
 * Scans every half second, as in every test (MaintenanceRouteTest's context, and the alarms').
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "lockwatch.alarms.open-after=1h")
class SensorReRegistrationTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    static final String ADMIN = Api.ADMIN, READER = Api.READER;

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired IngestProperties ingest;
    @Autowired Devices devices;
    @Autowired CamelContext camel;
    @LocalServerPort int port;
    Api api;

    @BeforeEach
    void api() {
        // a fresh context's first request builds the contract's validation: over 10 s on a loaded machine
        api = new Api(port, Duration.ofSeconds(30));
    }

    @Test
    void whatADeletedRegistrationLeftGoesWithItAndTheNewOneStartsClean() throws Exception {
        String id = "R" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        register(id);
        String site = api.client(receiver, "/site"), guard = api.client(receiver, "/guard");
        api.link(site, id);
        assertThat(api.call("PUT", "/sensors/" + id + "/escalation", ADMIN,
                Map.of("steps", List.of(Map.of("after_seconds", 1, "client_id", guard)))).status()).isEqualTo(200);
        Answer credential = api.call("POST", "/sensors/" + id + "/credentials", ADMIN, null);
        assertThat(credential.status()).isEqualTo(201);
        String login = credential.body().get("login").asText(), secret = credential.body().get("secret").asText();
        Answer window = api.call("POST", "/maintenance", ADMIN, Map.of("reason", "replacing the sensor",
                "ends_at", Instant.now().plus(Duration.ofHours(1)).toString(), "sensor_ids", List.of(id)));
        assertThat(window.status()).as(String.valueOf(window.body())).isEqualTo(201);
        String windowId = window.body().get("id").asText();

        // open past its 1 s threshold, then silent: the alarm and the loss are held by the window
        publish(id, 0, System.currentTimeMillis() - 1_500);
        await("the alarm held").atMost(Duration.ofSeconds(15)).until(() -> held(id, "alarm"));
        jdbc.update("UPDATE sensor_state SET lost_deadline = now() - interval '1 second' WHERE sensor_id = ?", id);
        await("the loss held").atMost(Duration.ofSeconds(15)).until(() -> held(id, "connectivity"));
        long lastOfTheOld = sequence(id);

        assertThat(api.call("DELETE", "/sensors/" + id, ADMIN, null).status()).isEqualTo(204);

        assertThat(activeAlarms(id)).as("its alarm ends with it").isZero();
        assertThat(held(id, "alarm") || held(id, "connectivity")).as("nothing held of it").isFalse();
        assertThat(devices.authenticate(login, secret)).as("its credential goes with it").isFalse();

        register(id);
        assertThat(api.call("GET", "/sensors/" + id + "/credentials", READER, null).body().get("items")).isEmpty();
        assertThat(api.call("GET", "/clients/" + site + "/sensors", READER, null).body().get("items").findValuesAsText("id"))
                .as("the link went with the old one").doesNotContain(id);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensor_escalation_steps WHERE sensor_id = ?", Integer.class, id))
                .as("and its chain").isZero();
        assertThat(devices.authenticate(login, secret)).as("the old credential is not the new sensor's").isFalse();

        // the new sensor, linked again, opens past its threshold inside the window that names its id
        api.link(site, id);
        publish(id, 0, System.currentTimeMillis() - 1_500);
        await("the new alarm").atMost(Duration.ofSeconds(15)).until(() -> held(id, "alarm"));
        NotifyBuilder scans = new NotifyBuilder(camel).fromRoute("alarms-are-raised-cleared-and-escalated").whenCompleted(4).create();
        assertThat(scans.matches(15, TimeUnit.SECONDS)).isTrue();
        assertThat(typesAfter(id, lastOfTheOld)).as("the old alarm's end, the old registration's last event (V42), "
                        + "then the new registration's events").containsExactly("sensor.alarm_cleared",
                "sensor.state_changed", "sensor.alarm_raised");
        assertThat(activeAlarms(id)).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, id)).isZero();

        // the window's end sends what is still true of the new sensor: its alarm, not the old one's loss
        assertThat(api.call("POST", "/maintenance/" + windowId + "/end", ADMIN, null).status()).isEqualTo(200);
        await().atMost(Duration.ofSeconds(15)).until(() -> Api.bodies(receiver, "/site").stream()
                .anyMatch(b -> b.get("type").asText().equals("sensor.alarm_raised")));
        // (what a window held is sent as a new event at its end, with the next number)
        List<JsonNode> heard = Api.bodies(receiver, "/site");
        assertThat(heard).filteredOn(b -> b.get("sequence").asLong() > lastOfTheOld)
                .extracting(b -> b.get("type").asText() + " " + b.get("sequence").asLong())
                .containsExactly("sensor.state_changed " + (lastOfTheOld + 2), "sensor.alarm_raised " + (lastOfTheOld + 4));
        // nobody was told of the old alarm, held by the window and not escalated: nobody hears its end
        assertThat(heard).extracting(b -> b.get("type").asText()).doesNotContain("sensor.connection_lost",
                "sensor.alarm_cleared");
        assertThat(receiver.at("/guard")).isEmpty();
    }

    private void register(String id) throws Exception {
        Answer created = api.call("POST", "/sensors", ADMIN, Map.of("id", id, "address", "Back door", "open_alarm_seconds", 1));
        assertThat(created.status()).as(String.valueOf(created.body())).isEqualTo(201);
        assertThat(created.body().get("state").isNull()).isTrue();
        assertThat(created.body().get("connectivity").asText()).isEqualTo("unknown");
    }

    private void publish(String sensor, int data, long ts) {
        rabbit.send(ingest.exchange(), sensor, Readings.reading(sensor, data, ts));
    }

    private boolean held(String sensor, String kind) {
        return Boolean.TRUE.equals(jdbc.queryForObject(
                "SELECT EXISTS (SELECT 1 FROM maintenance_held WHERE sensor_id = ? AND kind = ?)", Boolean.class, sensor, kind));
    }

    private int activeAlarms(String sensor) {
        return jdbc.queryForObject("SELECT count(*) FROM alarms WHERE sensor_id = ? AND cleared_at IS NULL", Integer.class, sensor);
    }

    private long sequence(String sensor) {
        return jdbc.queryForObject("SELECT sequence FROM sensor_state WHERE sensor_id = ?", Long.class, sensor);
    }

    private List<String> typesAfter(String sensor, long sequence) {
        return jdbc.queryForList("SELECT type FROM sensor_events WHERE sensor_id = ? AND sequence > ? ORDER BY sequence",
                String.class, sensor, sequence);
    }
}
