package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.notify.WebhookReceiver;
import org.apache.camel.CamelContext;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;

/**
 * Readings over MQTT on the embedded default: its own listener on loopback, bridged into the readings exchange.
 * Also the shipped Zigbee2MQTT mapping route, dropped into the routes directory of the running service.
 */
// a context of its own, closed after the class: left to the cache, it would be closed only once the next class's
// context had started, and its shutdown takes JVM-wide registrations (the platform-http paths) with it
@org.springframework.test.annotation.DirtiesContext(classMode = org.springframework.test.annotation.DirtiesContext.ClassMode.AFTER_CLASS)
class MqttIngestTest extends MqttIngestContract {

    static final String ZIGBEE_ROUTE = "zigbee2mqtt-contact-sensors-become-readings";

    @Autowired
    CamelContext camel;
    @Value("${lockwatch.routes.dir}")
    Path routesDir;

    /** Messages to a topic nobody has subscribed to yet are dropped by MQTT: the bridge is connected first. */
    @org.junit.jupiter.api.BeforeEach
    void theBridgeIsConnected() {
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() ->
                camel.getRouteController().getRouteStatus(MqttBridge.ROUTE).isStarted());
    }

    @Test
    void theListenerIsOnLoopback() {
        assertThat(brokerUrl).matches("tcp://127\\.0\\.0\\.1:\\d+");
    }

    @Test
    void theZigbee2mqttExampleRouteDroppedIntoTheRoutesDirectoryMakesContactSensorsReadings() throws Exception {
        Path file = routesDir.resolve("zigbee2mqtt.camel.yaml");
        Files.createDirectories(routesDir);
        Files.copy(Path.of("examples/routes/zigbee2mqtt.camel.yaml"), file, StandardCopyOption.REPLACE_EXISTING);
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> camel.getRoute(ZIGBEE_ROUTE) != null
                    && camel.getRouteController().getRouteStatus(ZIGBEE_ROUTE).isStarted());
            String id = sensor();
            String hook = linkedClient(id);
            amqp.purgeQueue(ingest.invalidQueue(), false);

            publish("zigbee2mqtt/" + id, "{\"contact\": false, \"battery\": 97, \"linkquality\": 120}");
            publish("zigbee2mqtt/" + id, "{\"battery\": 96, \"linkquality\": 117}"); // no contact state: not a reading
            publish("zigbee2mqtt/" + id, "offline"); // no JSON object: not a reading
            publish("zigbee2mqtt/" + id, "{\"contact\": true, \"battery\": 97, \"linkquality\": 118}");
            publish("zigbee2mqtt/Front door", "{\"contact\": true}"); // a name that is no sensor id

            await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at(hook).size() >= 2);
            List<Integer> states = new ArrayList<>();
            for (WebhookReceiver.Received r : receiver.at(hook)) {
                JsonNode body = JSON.readTree(r.body());
                states.add(body.get("state").asInt());
            }
            assertThat(states).containsExactly(0, 1);
            Message parked = rabbit.receive(ingest.invalidQueue(), 10_000);
            assertThat(parked).isNotNull();
            assertThat(new String(parked.getBody(), StandardCharsets.UTF_8)).isEqualTo("1");
            assertThat(parked.getMessageProperties().<String>getHeader(IngestSteps.REASON_HEADER)).isEqualTo("invalid_topic");
            assertThat(parked.getMessageProperties().<String>getHeader(IngestSteps.DETAIL_HEADER)).endsWith("got lockwatch/readings/Front door");
        } finally {
            // Camel's reload follows a file that is saved, not one deleted: the route goes as an operator's would
            Files.deleteIfExists(file);
            camel.getRouteController().stopRoute(ZIGBEE_ROUTE);
            camel.removeRoute(ZIGBEE_ROUTE);
        }
    }
}
