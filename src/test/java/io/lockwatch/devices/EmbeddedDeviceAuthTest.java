package io.lockwatch.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The embedded default's MQTT listener with {@code lockwatch.ingest.device-auth=required}: the same rules as RabbitMQ
 * (DeviceIdentityIT) from the same registry. A client without a login is refused; a device publishes for its own
 * sensors only and subscribes to nothing; the bridge still takes readings into the pipeline.
 */
@CamelSpringBootTest
@SpringBootTest(properties = "lockwatch.ingest.device-auth=required")
class EmbeddedDeviceAuthTest {

    @Value("${lockwatch.mqtt.broker-url}") String brokerUrl;
    @Autowired Devices devices;
    @Autowired JdbcTemplate jdbc;
    @Autowired MeterRegistry meters;
    @Autowired org.apache.camel.CamelContext camel;

    /** MQTT drops what is published to a topic nobody has subscribed to yet: the bridge is connected first. */
    @org.junit.jupiter.api.BeforeEach
    void bridgeConnected() {
        await().atMost(Duration.ofSeconds(20)).until(() ->
                camel.getRouteController().getRouteStatus(io.lockwatch.ingest.MqttBridge.ROUTE).isStarted());
    }

    @Test
    void withoutALoginOrWithAWrongSecretAClientIsRefused() throws Exception {
        String a = sensor();
        devices.createCredential(DeviceLogin.ofSensor(a), Duration.ZERO);
        assertThatThrownBy(() -> connect(null, null)).isInstanceOf(MqttException.class);
        assertThatThrownBy(() -> connect("sensor." + a, "lwd_wrong")).isInstanceOf(MqttException.class);
        assertThatThrownBy(() -> connect("lockwatch-bridge", "guess")).as("the bridge's login is its own").isInstanceOf(MqttException.class);
    }

    @Test
    void aDeviceReportsForItsOwnSensorsAndNoOtherNorSubscribes() throws Exception {
        String a = sensor(), b = sensor(), gateway = "gw-" + UUID.randomUUID().toString().substring(0, 8);
        String c = sensor();
        devices.createGateway(gateway, null, List.of(c));
        String secret = devices.createCredential(DeviceLogin.ofSensor(a), Duration.ZERO).secret();
        String gatewaySecret = devices.createCredential(DeviceLogin.ofGateway(gateway), Duration.ZERO).secret();
        double refusedBefore = refused("mqtt-publish") + refused("mqtt-subscribe");

        MqttClient device = connect("sensor." + a, secret);
        publish(device, "lockwatch/readings/" + a, "0");
        await().atMost(Duration.ofSeconds(15)).until(() -> Integer.valueOf(0).equals(state(a)));
        // refused: the listener closes the connection, as RabbitMQ's plugin does, rather than leave it waiting for a PUBACK
        assertThatThrownBy(() -> publish(device, "lockwatch/readings/" + b, "0")).isInstanceOf(MqttException.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> !device.isConnected());
        MqttClient gw = connect("gateway." + gateway, gatewaySecret);
        publish(gw, "lockwatch/readings/" + c, "0");
        await().atMost(Duration.ofSeconds(15)).until(() -> Integer.valueOf(0).equals(state(c)));
        close(gw);

        MqttClient watcher = connect("sensor." + a, secret);
        try {
            int[] granted = watcher.subscribeWithResponse(new String[] {"lockwatch/readings/#"}, new int[] {1}).getGrantedQos();
            assertThat(granted).as("a refused subscription").containsExactly(0x80);
        } catch (MqttException refused) {
            // or refused outright
        } finally {
            close(watcher);
        }
        assertThat(refused("mqtt-publish") + refused("mqtt-subscribe")).isGreaterThanOrEqualTo(refusedBefore + 2);
        assertThat(state(b)).as("never applied").isNull();
        device.close();
    }

    private String sensor() {
        String id = "E" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'test')", id);
        return id;
    }

    private Integer state(String sensor) {
        List<Integer> s = jdbc.queryForList("SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, sensor);
        return s.isEmpty() ? null : s.get(0);
    }

    private double refused(String check) {
        var c = meters.find("lockwatch.devices.refused").tag("check", check).counter();
        return c == null ? 0 : c.count();
    }

    private MqttClient connect(String user, String password) throws MqttException {
        MqttClient client = new MqttClient(brokerUrl, "t-" + UUID.randomUUID(), new MemoryPersistence());
        client.setTimeToWait(10_000);
        MqttConnectOptions options = new MqttConnectOptions();
        options.setCleanSession(true);
        options.setConnectionTimeout(10);
        if (user != null) {
            options.setUserName(user);
            options.setPassword(password.toCharArray());
        }
        try {
            client.connect(options);
        } catch (MqttException e) {
            client.close();
            throw e;
        }
        return client;
    }

    private static void publish(MqttClient client, String topic, String payload) throws MqttException {
        MqttMessage m = new MqttMessage(payload.getBytes(StandardCharsets.UTF_8));
        m.setQos(1);
        client.publish(topic, m);
    }

    private static void close(MqttClient client) throws MqttException {
        if (client.isConnected()) {
            client.disconnect();
        }
        client.close();
    }
}
