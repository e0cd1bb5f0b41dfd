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

import org.eclipse.paho.client.mqttv3.MqttMessage;

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
    static final String BRIDGE_KEEPER = "mqtt-bridge-is-started-and-kept-started";

    @Autowired
    CamelContext camel;
    @Value("${lockwatch.routes.dir}")
    Path routesDir;
    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;
    @Autowired
    org.springframework.boot.actuate.health.HealthEndpoint health;
    io.micrometer.core.instrument.Counter retained;

    @org.junit.jupiter.api.BeforeEach
    void theRetainedCounter() {
        retained = meters.counter("lockwatch.readings.mqtt.retained");
    }

    /** Messages to a topic nobody has subscribed to yet are dropped by MQTT: the bridge is connected first. */
    @org.junit.jupiter.api.BeforeEach
    void theBridgeIsConnected() {
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() ->
                camel.getRouteController().getRouteStatus(MqttBridge.ROUTE).isStarted());
    }

    /**
     * While the bridge is away (as while it connects at start, or reconnects), the listener acknowledges no reading,
     * which MQTT would drop for want of a subscriber: it refuses it, and says it is not ready, until the bridge is back.
     */
    @Test
    void whileTheBridgeIsAwayAReadingIsRefusedNotAcknowledgedAndLost() throws Exception {
        String id = sensor();
        org.apache.camel.spi.RouteController routes = camel.getRouteController();
        routes.stopRoute(BRIDGE_KEEPER); // it would start the bridge again at once
        routes.stopRoute(MqttBridge.ROUTE);
        try {
            org.eclipse.paho.client.mqttv3.MqttClient early = new org.eclipse.paho.client.mqttv3.MqttClient(brokerUrl,
                    "test-early-" + java.util.UUID.randomUUID(), new org.eclipse.paho.client.mqttv3.persist.MemoryPersistence());
            early.setTimeToWait(30_000);
            early.connect();
            try {
                MqttMessage m = new MqttMessage("0".getBytes(StandardCharsets.UTF_8));
                m.setQos(1);
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> early.publish("lockwatch/readings/" + id, m))
                        .as("not acknowledged").isInstanceOf(org.eclipse.paho.client.mqttv3.MqttException.class);
            } finally {
                if (early.isConnected()) {
                    early.disconnect();
                }
                early.close(true);
            }
            assertThat(health.healthForPath("mqtt").getStatus()).isEqualTo(org.springframework.boot.actuate.health.Status.DOWN);
            assertThat(health.health().getStatus()).isEqualTo(org.springframework.boot.actuate.health.Status.DOWN);
            assertThat(health.healthForPath("readiness").getStatus()).as("the service says it is not ready")
                    .isEqualTo(org.springframework.boot.actuate.health.Status.DOWN);
        } finally {
            routes.startRoute(MqttBridge.ROUTE);
            routes.startRoute(BRIDGE_KEEPER);
        }
        assertThat(health.healthForPath("mqtt").getStatus()).isEqualTo(org.springframework.boot.actuate.health.Status.UP);
        publish("lockwatch/readings/" + id, "1"); // as the device sends it again, once the bridge is back: taken
        await().atMost(Duration.ofSeconds(15)).until(() -> Integer.valueOf(1).equals(jdbc.queryForObject(
                "SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, id)));
    }

    /**
     * The bridge's client id is the bridge's login's only: a client connecting with it otherwise (here anonymous, as
     * anyone on loopback may) is refused, rather than take the bridge's session and its subscription over, and a
     * reading published right after is taken.
     */
    @Test
    void aClientWithTheBridgesClientIdIsRefusedAndTheBridgeStaysSubscribed() throws Exception {
        String id = sensor();
        String bridgeId = ((org.apache.camel.component.paho.PahoEndpoint) camel.getRoute(MqttBridge.ROUTE).getEndpoint())
                .getConfiguration().getClientId();
        io.micrometer.core.instrument.Counter refused = meters.counter("lockwatch.devices.refused", "check", "mqtt-login");
        double before = refused.count();
        org.eclipse.paho.client.mqttv3.MqttClient impostor = new org.eclipse.paho.client.mqttv3.MqttClient(brokerUrl,
                bridgeId, new org.eclipse.paho.client.mqttv3.persist.MemoryPersistence());
        try {
            org.assertj.core.api.Assertions.assertThatThrownBy(impostor::connect).as("refused")
                    .isInstanceOf(org.eclipse.paho.client.mqttv3.MqttException.class);
        } finally {
            if (impostor.isConnected()) {
                impostor.disconnect();
            }
            impostor.close(true);
        }
        assertThat(refused.count() - before).as("counted as a refused login").isEqualTo(1.0);
        publish("lockwatch/readings/" + id, "1");
        await().atMost(Duration.ofSeconds(15)).until(() -> Integer.valueOf(1).equals(jdbc.queryForObject(
                "SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, id)));
    }

    @Test
    void theListenerIsOnLoopback() {
        assertThat(brokerUrl).matches("tcp://127\\.0\\.0\\.1:\\d+");
    }

    /**
     * A message published retained counts once, as it arrives, and is not kept: when the bridge reconnects (and
     * subscribes again) that old "open" is not handed over again as a new reading over the newer "closed".
     */
    @Test
    void aRetainedMessageCountsOnceAndIsNotHandedOverAgainWhenTheBridgeReconnects() throws Exception {
        String id = sensor();
        String hook = linkedClient(id);
        double before = retained.count();
        MqttMessage open = new MqttMessage("0".getBytes(StandardCharsets.UTF_8));
        open.setQos(1);
        open.setRetained(true);
        sensor.publish("lockwatch/readings/" + id, open);
        publish("lockwatch/readings/" + id, "1");
        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at(hook).size() == 2 && retained.count() > before);
        assertThat(retained.count() - before).as("counted as retained, once").isEqualTo(1.0);

        // as after a lost connection: the bridge subscribes again
        camel.getRouteController().stopRoute(MqttBridge.ROUTE);
        camel.getRouteController().startRoute(MqttBridge.ROUTE);
        publish("lockwatch/readings/" + id, "1"); // a repeat: whatever the listener handed over came before it
        await().atMost(Duration.ofSeconds(15)).until(() -> Long.valueOf(3).equals(jdbc.queryForObject(
                "SELECT count(*) FROM reading_history WHERE sensor_id = ?", Long.class, id)));

        assertThat(jdbc.queryForObject("SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, id))
                .as("still closed").isEqualTo(1);
        assertThat(jdbc.queryForList("SELECT data FROM reading_history WHERE sensor_id = ? ORDER BY received_at",
                Integer.class, id)).as("the open, the close and the repeat: nothing again").containsExactly(0, 1, 1);
        assertThat(receiver.at(hook)).hasSize(2);
    }

    /** mosquitto_pub 2.0 sends no client id: accepted, for a clean session, as MQTT 3.1.1 allows. */
    @Test
    void aClientWithoutAClientIdIsGivenOne() throws Exception {
        String id = sensor();
        org.eclipse.paho.client.mqttv3.MqttClient anonymous = new org.eclipse.paho.client.mqttv3.MqttClient(brokerUrl, "",
                new org.eclipse.paho.client.mqttv3.persist.MemoryPersistence());
        org.eclipse.paho.client.mqttv3.MqttConnectOptions options = new org.eclipse.paho.client.mqttv3.MqttConnectOptions();
        options.setCleanSession(true);
        anonymous.connect(options);
        try {
            MqttMessage m = new MqttMessage("0".getBytes(StandardCharsets.UTF_8));
            m.setQos(1);
            anonymous.publish("lockwatch/readings/" + id, m);
        } finally {
            anonymous.disconnect();
            anonymous.close();
        }
        await().atMost(Duration.ofSeconds(15)).until(() -> Integer.valueOf(0).equals(jdbc.queryForObject(
                "SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, id)));
    }

    @Test
    void theZigbee2mqttExampleRouteDroppedIntoTheRoutesDirectoryMakesContactSensorsReadings() throws Exception {
        Path file = routesDir.resolve("zigbee2mqtt.camel.yaml");
        Files.createDirectories(routesDir);
        // written beside, then moved in whole: the watcher may otherwise read the file while it is half copied
        Path written = Files.copy(Path.of("examples/routes/zigbee2mqtt.camel.yaml"),
                routesDir.resolveSibling(routesDir.getFileName() + ".zigbee2mqtt.camel.yaml"), StandardCopyOption.REPLACE_EXISTING);
        Files.move(written, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
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
