package io.lockwatch.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttException;
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
        DeviceClients.publish(device, "lockwatch/readings/" + a, "0");
        await().atMost(Duration.ofSeconds(15)).until(() -> Integer.valueOf(0).equals(state(a)));
        // refused: the listener closes the connection, as RabbitMQ's plugin does, rather than leave it waiting for a PUBACK
        assertThatThrownBy(() -> DeviceClients.publish(device, "lockwatch/readings/" + b, "0")).isInstanceOf(MqttException.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> !device.isConnected());
        MqttClient gw = connect("gateway." + gateway, gatewaySecret);
        DeviceClients.publish(gw, "lockwatch/readings/" + c, "0");
        await().atMost(Duration.ofSeconds(15)).until(() -> Integer.valueOf(0).equals(state(c)));
        DeviceClients.close(gw);

        MqttClient watcher = connect("sensor." + a, secret);
        try {
            int[] granted = watcher.subscribeWithResponse(new String[] {"lockwatch/readings/#"}, new int[] {1}).getGrantedQos();
            assertThat(granted).as("a refused subscription").containsExactly(0x80);
        } catch (MqttException refused) {
            // or refused outright
        } finally {
            DeviceClients.close(watcher);
        }
        assertThat(refused("mqtt-publish") + refused("mqtt-subscribe")).isGreaterThanOrEqualTo(refusedBefore + 2);
        assertThat(state(b)).as("never applied").isNull();
        device.close();
    }

    private String sensor() {
        return DeviceClients.sensor(jdbc, "E");
    }

    private Integer state(String sensor) {
        return DeviceClients.state(jdbc, sensor);
    }

    private double refused(String check) {
        return DeviceClients.count(meters, "lockwatch.devices.refused", "check", check);
    }

    private MqttClient connect(String user, String password) throws MqttException {
        return DeviceClients.mqtt(brokerUrl, user, password);
    }
}
