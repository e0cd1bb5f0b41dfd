package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.notify.WebhookSigner;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Sensors over MQTT, with a real MQTT 3.1.1 client (Paho), into the same pipeline as AMQP: the bare and JSON
 * forms, order kept per sensor, a change notified once and a repeat never, bad topics and payloads parked with
 * their reason while good readings go on. Run on the embedded default ({@link MqttIngestTest}: its own MQTT
 * listener) and against RabbitMQ's MQTT plugin ({@code MqttIngestIT}).
 */
@CamelSpringBootTest
@SpringBootTest(properties = {"lockwatch.notify.poll-interval=100"})
public abstract class MqttIngestContract {

    static final ObjectMapper JSON = new ObjectMapper();

    /** One per test class: a static extension field here would be one for all the subclasses, closed after the first. */
    static WebhookReceiver receiver;

    @BeforeAll
    static void openTheReceiver() throws Exception {
        receiver = new WebhookReceiver();
    }

    @AfterAll
    static void closeTheReceiver() {
        receiver.close();
    }

    @Value("${lockwatch.mqtt.broker-url}")
    String brokerUrl;
    @Autowired
    JdbcTemplate jdbc;
    @Autowired
    RabbitTemplate rabbit;
    @Autowired
    AmqpAdmin amqp;
    @Autowired
    IngestProperties ingest;

    MqttClient sensor;

    @BeforeEach
    void connect() throws Exception {
        sensor = new MqttClient(brokerUrl, "test-sensor-" + UUID.randomUUID(), new MemoryPersistence());
        MqttConnectOptions options = new MqttConnectOptions();
        options.setCleanSession(true);
        // Paho's synchronous publish can return before it counts the PUBACK (paho.mqtt.java #551), so a quick loop
        // of one-at-a-time publishes may hit its in-flight window of 10; the window is not what these tests measure.
        options.setMaxInflight(1000);
        logIn(options);
        sensor.connect(options);
    }

    /** Anonymous, as a first run on the embedded default allows. */
    void logIn(MqttConnectOptions options) {
    }

    @AfterEach
    void disconnect() throws Exception {
        sensor.disconnect();
        sensor.close();
    }

    @Test
    void bareAndJsonPayloadsAreReadingsOfTheTopicsSensorAndEachChangeIsNotifiedOnce() throws Exception {
        String id = sensor();
        String hook = linkedClient(id);

        publish("lockwatch/readings/" + id, "1");
        // no ts: measured at receipt, as the bare ones (an earlier ts than the last reading's receipt would be stale)
        publish("lockwatch/readings/" + id, "{\"data\":0,\"message_id\":\"" + UUID.randomUUID() + "\"}");
        publish("lockwatch/readings/" + id, "{\"sensor_id\":\"" + id + "\",\"data\":1}");
        publish("lockwatch/readings/" + id, "1"); // a repeat: nobody hears of it
        publish("lockwatch/readings/" + id, "0");

        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at(hook).size() >= 4);
        List<JsonNode> bodies = new ArrayList<>();
        for (WebhookReceiver.Received r : receiver.at(hook)) {
            bodies.add(JSON.readTree(r.body()));
        }
        assertThat(bodies).extracting(b -> b.get("sequence").asLong()).containsExactly(1L, 2L, 3L, 4L);
        assertThat(bodies).extracting(b -> b.get("state").asInt()).containsExactly(1, 0, 1, 0);
        assertThat(bodies).extracting(b -> b.get("sensor_id").asText()).containsOnly(id);
        assertThat(jdbc.queryForObject("SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, id)).isZero();
    }

    @Test
    void aSensorsReadingsKeepTheirOrder() throws Exception {
        String id = sensor();
        String hook = linkedClient(id);

        for (int i = 0; i < 30; i++) {
            publish("lockwatch/readings/" + id, String.valueOf(i % 2));
        }

        await().atMost(Duration.ofSeconds(20)).until(() -> receiver.at(hook).size() == 30);
        List<Integer> states = new ArrayList<>();
        List<Long> sequences = new ArrayList<>();
        for (WebhookReceiver.Received r : receiver.at(hook)) {
            JsonNode b = JSON.readTree(r.body());
            states.add(b.get("state").asInt());
            sequences.add(b.get("sequence").asLong());
        }
        for (int i = 0; i < 30; i++) {
            assertThat(states.get(i)).as("state %d", i).isEqualTo(i % 2);
            assertThat(sequences.get(i)).as("sequence %d", i).isEqualTo(i + 1L);
        }
    }

    @Test
    void badTopicsAndPayloadsAreParkedWithTheirReasonAndGoodOnesGoOn() throws Exception {
        String id = sensor();
        amqp.purgeQueue(ingest.invalidQueue(), false);

        publish("lockwatch/readings/no-such-id", "1");
        publish("lockwatch/readings/" + id + "/extra", "1");
        publish("lockwatch/readings/" + id, "open");
        publish("lockwatch/readings/" + id, "{\"sensor_id\":\"Someone" + "Else\",\"data\":1}");
        publish("lockwatch/readings/" + id, "1");

        Map<String, String> parked = new TreeMap<>();
        await().atMost(Duration.ofSeconds(15)).until(() -> {
            Message m = rabbit.receive(ingest.invalidQueue(), 100);
            if (m != null) {
                parked.put(new String(m.getBody(), StandardCharsets.UTF_8) + " @ "
                                + m.getMessageProperties().getHeader("x-original-routing-key"),
                        m.getMessageProperties().getHeader(IngestSteps.REASON_HEADER));
            }
            return parked.size() == 4;
        });
        assertThat(parked).containsOnly(
                Map.entry("1 @ lockwatch.readings.no-such-id", "invalid_topic"),
                Map.entry("1 @ lockwatch.readings." + id + ".extra", "invalid_topic"),
                Map.entry("open @ lockwatch.readings." + id, "invalid_data"),
                Map.entry("{\"sensor_id\":\"SomeoneElse\",\"data\":1} @ lockwatch.readings." + id, "topic_mismatch"));
        await().atMost(Duration.ofSeconds(10)).until(() ->
                Integer.valueOf(1).equals(jdbc.queryForObject("SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, id)));
    }

    /** QoS 1, as sensors are asked to: returns once the broker has it. */
    void publish(String topic, String payload) throws Exception {
        MqttMessage m = new MqttMessage(payload.getBytes(StandardCharsets.UTF_8));
        m.setQos(1);
        sensor.publish(topic, m);
    }

    String sensor() {
        String id = "M" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'Svobody st. 23, the back door')", id);
        return id;
    }

    /** A client at the receiver, linked to the sensor; its path on the receiver. */
    String linkedClient(String sensorId) {
        String path = "/mqtt-" + UUID.randomUUID();
        UUID client = jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('mqtt', ?, ?) RETURNING id",
                UUID.class, receiver.url(path), WebhookSigner.newSecret());
        jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)", client, sensorId);
        return path;
    }
}
