package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.Api.Answer;
import io.lockwatch.testing.Readings;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A device's battery, tamper switch and signal, as the optional fields of its readings (issue 57), beside the
 * features they meet: kept on the sensor from applied readings only, never a change of the door or a notification,
 * visible to the clients linked to it, and gone with a deleted registration. The context is
 * SensorReRegistrationTest's, shared.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "lockwatch.alarms.open-after=1h")
class DeviceHealthTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired IngestProperties ingest;
    @LocalServerPort int port;
    Api api;

    @BeforeEach
    void api() {
        api = new Api(port, Duration.ofSeconds(30));
    }

    @Test
    void healthIsKeptFromAppliedReadingsAndNeverNotifies() throws Exception {
        String id = register();
        String client = api.client(receiver, "/health");
        api.link(client, id);
        long t0 = System.currentTimeMillis() - 60_000;

        publish(Readings.reading(id, 1, t0, ",\"battery\":80,\"rssi\":-90,\"snr\":5.5"));
        await().atMost(Duration.ofSeconds(15)).until(() -> !health(id).isNull());
        JsonNode h = health(id);
        assertThat(h.get("battery").asDouble()).isEqualTo(80);
        assertThat(Instant.parse(h.get("battery_at").asText())).isEqualTo(Instant.ofEpochMilli(t0));
        assertThat(h.get("rssi").asInt()).isEqualTo(-90);
        assertThat(h.get("snr").asDouble()).isEqualTo(5.5);
        assertThat(h.get("tamper").isNull()).isTrue();
        assertThat(h.get("tamper_at").isNull()).isTrue();
        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at("/health").size() == 1); // the door's first state
        long sequence = sequence(id);

        // a repeat of the door with news of the device: kept, and nobody told (no alarm either: HealthAlarmsTest); a
        // signal without its snr leaves none
        publish(Readings.reading(id, 1, t0 + 1_000, ",\"battery\":79,\"tamper\":false,\"rssi\":-95"));
        await().atMost(Duration.ofSeconds(15)).until(() -> health(id).get("tamper").isBoolean());
        assertThat(health(id).get("tamper").asBoolean()).isFalse();
        h = health(id);
        assertThat(h.get("battery").asDouble()).isEqualTo(79);
        assertThat(Instant.parse(h.get("tamper_at").asText())).isEqualTo(Instant.ofEpochMilli(t0 + 1_000));
        assertThat(h.get("rssi").asInt()).isEqualTo(-95);
        assertThat(h.get("snr").isNull()).isTrue();

        // older than what is applied: says nothing, not even of the battery; a later reading without health keeps it
        Readings.publishInOrder(rabbit, ingest.exchange(), List.of(Readings.reading(id, 1, t0 - 5_000, ",\"battery\":5"),
                Readings.reading(id, 1, t0 + 2_000)));
        // (history takes a batch's readings once it is committed)
        await().atMost(Duration.ofSeconds(15)).until(() -> api.call("GET", "/sensors/" + id + "/readings", Api.READER, null)
                .body().get("items").findValuesAsText("measured_at").contains(Instant.ofEpochMilli(t0 + 2_000).toString()));
        assertThat(health(id).get("battery").asDouble()).isEqualTo(79);
        assertThat(sequence(id)).as("no event of the device's health").isEqualTo(sequence);

        // the client linked to the sensor sees it too, with its own key
        Answer key = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "door panel", "role", "client-read"));
        assertThat(key.status()).as(String.valueOf(key.body())).isEqualTo(201);
        Answer own = api.call("GET", "/clients/" + client + "/sensors", key.body().get("token").asText(), null);
        assertThat(own.body().get("items").get(0).get("health").get("tamper").isBoolean()).isTrue();
        assertThat(own.body().get("items").get(0).get("health").get("tamper").asBoolean()).isFalse();

        // over HTTP, a value out of its range refuses the reading, naming the field
        Answer refused = api.call("POST", "/readings", Api.ADMIN, Map.of("sensor_id", id, "data", 0, "battery", 150));
        assertThat(refused.status()).isEqualTo(400);
        assertThat(refused.body().path("field").asText()).as(String.valueOf(refused.body())).isEqualTo("battery");

        // deleted and registered again: nothing of the old device's health
        assertThat(api.call("DELETE", "/sensors/" + id, Api.ADMIN, null).status()).isEqualTo(204);
        assertThat(api.call("POST", "/sensors", Api.ADMIN, Map.of("id", id, "address", "Cellar")).status()).isEqualTo(201);
        assertThat(health(id).isNull()).isTrue();
    }

    private String register() throws Exception {
        String id = "H" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        Answer created = api.call("POST", "/sensors", Api.ADMIN, Map.of("id", id, "address", "Cellar"));
        assertThat(created.status()).as(String.valueOf(created.body())).isEqualTo(201);
        assertThat(created.body().get("health").isNull()).as("nothing said yet").isTrue();
        return id;
    }

    private void publish(Message m) {
        Readings.publishInOrder(rabbit, ingest.exchange(), List.of(m));
    }

    private JsonNode sensor(String id) throws Exception {
        Answer a = api.call("GET", "/sensors/" + id, Api.READER, null);
        assertThat(a.status()).isEqualTo(200);
        return a.body();
    }

    private JsonNode health(String id) throws Exception {
        return sensor(id).get("health");
    }

    private long sequence(String sensor) {
        return jdbc.queryForObject("SELECT sequence FROM sensor_state WHERE sensor_id = ?", Long.class, sensor);
    }
}
