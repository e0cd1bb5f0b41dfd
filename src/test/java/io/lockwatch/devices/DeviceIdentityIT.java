package io.lockwatch.devices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static io.lockwatch.devices.DeviceClients.close;
import static io.lockwatch.devices.DeviceClients.publish;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * Device identity as RabbitMQ enforces it, configured by {@code scripts/services.sh}: its MQTT plugin and its AMQP
 * listener ask this service (on port 8080, where the broker is told to ask) through the HTTP auth backend and its
 * cache. A device reports for its own sensors only, over either protocol; no credentials, a wrong secret and a revoked
 * credential are refused; a gateway reports for its sensors.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.DEFINED_PORT, properties = "server.port=8080")
@ActiveProfiles("external")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class DeviceIdentityIT {

    /** auth_cache.cache_ttl in scripts/services.sh, and a margin. */
    static final Duration CACHE_TTL = Duration.ofSeconds(10);

    @Autowired Devices devices;
    @Autowired JdbcTemplate jdbc;
    @Autowired MeterRegistry meters;

    @Test
    void overMqttADeviceReportsForItsOwnSensorAndIsRefusedAnother() throws Exception {
        String a = sensor(), b = sensor();
        String secret = devices.createCredential(DeviceLogin.ofSensor(a), Duration.ZERO).secret();
        double refusedBefore = refused("topic");

        MqttClient device = mqtt("sensor." + a, secret);
        publish(device, "lockwatch/readings/" + a, "0");
        await().atMost(Duration.ofSeconds(15)).until(() -> state(a) != null && state(a) == 0);

        // the broker closes the connection of a device that publishes for another sensor
        assertThatThrownBy(() -> publish(device, "lockwatch/readings/" + b, "0")).isInstanceOf(MqttException.class);
        await().atMost(Duration.ofSeconds(10)).until(() -> !device.isConnected());
        assertThat(refused("topic")).isGreaterThan(refusedBefore);
        device.close();

        // nor may it subscribe to what others report
        MqttClient watcher = mqtt("sensor." + a, secret);
        try {
            watcher.subscribe("lockwatch/readings/#", 1);
            assertThat(watcher.isConnected()).as("a granted subscription").isFalse();
        } catch (MqttException refused) {
            // refused, as it should be: a failure code in the SUBACK, or the connection closed
        } finally {
            close(watcher);
        }
        assertThat(state(b)).as("never applied").isNull();
    }

    @Test
    void overMqttNoCredentialsOrAWrongSecretAreRefused() throws Exception {
        String a = sensor();
        devices.createCredential(DeviceLogin.ofSensor(a), Duration.ZERO);
        assertThatThrownBy(() -> mqtt(null, null)).isInstanceOf(MqttException.class);
        assertThatThrownBy(() -> mqtt("sensor." + a, "lwd_wrong")).isInstanceOf(MqttException.class);
        assertThatThrownBy(() -> mqtt("sensor." + a, "")).isInstanceOf(MqttException.class);
    }

    @Test
    void aRevokedCredentialIsRefusedOnceTheBrokersCacheRunsOut() throws Exception {
        String a = sensor();
        Devices.NewCredential credential = devices.createCredential(DeviceLogin.ofSensor(a), Duration.ZERO);
        close(mqtt("sensor." + a, credential.secret()));

        devices.revokeCredential(DeviceLogin.ofSensor(a), credential.credential().id());
        long revoked = System.nanoTime();
        await().atMost(CACHE_TTL.plusSeconds(10)).pollInterval(Duration.ofMillis(500)).until(() -> {
            try {
                close(mqtt("sensor." + a, credential.secret()));
                return false;
            } catch (MqttException refused) {
                return true;
            }
        });
        System.out.printf("revoked credential refused %d ms after its revocation%n", (System.nanoTime() - revoked) / 1_000_000);
    }

    @Test
    void overAmqpAGatewayPublishesForItsSensorsWithTheirKeysOnly() throws Exception {
        String a = sensor(), b = sensor(), gateway = "gw-" + UUID.randomUUID().toString().substring(0, 8);
        devices.createGateway(gateway, "test", List.of(a));
        String secret = devices.createCredential(DeviceLogin.ofGateway(gateway), Duration.ZERO).secret();

        try (Connection connection = amqp(gateway, secret)) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            channel.basicPublish("lockwatch.readings", a, props(), "{\"sensor_id\":\"%s\",\"data\":0}".formatted(a).getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(5000);
            await().atMost(Duration.ofSeconds(15)).until(() -> state(a) != null && state(a) == 0);

            Channel other = connection.createChannel();
            other.confirmSelect();
            other.basicPublish("lockwatch.readings", b, props(), "{\"sensor_id\":\"%s\",\"data\":0}".formatted(b).getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> other.waitForConfirmsOrDie(5000)).as("ACCESS_REFUSED closes the channel").isNotNull();
            assertThat(other.isOpen()).isFalse();
        }
        assertThatThrownBy(() -> amqp(gateway, "lwd_wrong")).as("a wrong secret").isNotNull();
        assertThat(state(b)).isNull();
    }

    @Test
    void readingsInsideAMessageAreHeldToThePublishersSensorsByItsUserId() throws Exception {
        String a = sensor(), b = sensor(), gateway = "gw-" + UUID.randomUUID().toString().substring(0, 8);
        devices.createGateway(gateway, null, List.of(a));
        String secret = devices.createCredential(DeviceLogin.ofGateway(gateway), Duration.ZERO).secret();
        double parkedBefore = invalid("not_authorized");

        try (Connection connection = amqp(gateway, secret)) {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            // the key is its own sensor's, so the broker lets it in; the array also names a sensor not its own
            AMQP.BasicProperties byTheGateway = props().builder().userId("gateway." + gateway).build();
            channel.basicPublish("lockwatch.readings", a, byTheGateway, "[{\"sensor_id\":\"%s\",\"data\":0},{\"sensor_id\":\"%s\",\"data\":0}]"
                    .formatted(a, b).getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(5000);
            // RabbitMQ vouches for the user-id: a gateway cannot name another publisher
            Channel forged = connection.createChannel();
            forged.confirmSelect();
            forged.basicPublish("lockwatch.readings", a, props().builder().userId("guest").build(), "{\"sensor_id\":\"%s\",\"data\":1}"
                    .formatted(a).getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> forged.waitForConfirmsOrDie(5000)).isNotNull();
        }
        await().atMost(Duration.ofSeconds(15)).until(() -> Integer.valueOf(0).equals(state(a)) && invalid("not_authorized") > parkedBefore);
        assertThat(state(b)).as("parked as not_authorized, never applied").isNull();
    }

    @Test
    void overMqttAGatewayReportsForEachOfItsSensors() throws Exception {
        String a = sensor(), b = sensor(), gateway = "gw-" + UUID.randomUUID().toString().substring(0, 8);
        devices.createGateway(gateway, null, List.of(a, b));
        String secret = devices.createCredential(DeviceLogin.ofGateway(gateway), Duration.ZERO).secret();
        MqttClient device = mqtt("gateway." + gateway, secret);
        publish(device, "lockwatch/readings/" + a, "0");
        publish(device, "lockwatch/readings/" + b, "0");
        await().atMost(Duration.ofSeconds(15)).until(() -> Integer.valueOf(0).equals(state(a)) && Integer.valueOf(0).equals(state(b)));
        close(device);
    }

    private static AMQP.BasicProperties props() {
        return new AMQP.BasicProperties.Builder().contentType("application/json").deliveryMode(2).build();
    }

    private String sensor() {
        return DeviceClients.sensor(jdbc, "D");
    }

    private Integer state(String sensor) {
        return DeviceClients.state(jdbc, sensor);
    }

    private double invalid(String reason) {
        return DeviceClients.count(meters, "lockwatch.readings.invalid", "reason", reason);
    }

    private double refused(String check) {
        return DeviceClients.count(meters, "lockwatch.devices.refused", "check", check);
    }

    /** An AMQP connection of the gateway's, to RabbitMQ. */
    private static Connection amqp(String gateway, String secret) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setUsername("gateway." + gateway);
        factory.setPassword(secret);
        return factory.newConnection();
    }

    private static MqttClient mqtt(String user, String password) throws MqttException {
        return DeviceClients.mqtt("tcp://127.0.0.1:1883", user, password);
    }

}
