package io.lockwatch.devices;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;

import io.micrometer.core.instrument.MeterRegistry;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.springframework.jdbc.core.JdbcTemplate;

/** What the device tests share: devices as MQTT clients, and the sensors, states and counts they look at. */
final class DeviceClients {

    private DeviceClients() {
    }

    /** Connected with this login (none: anonymous), or the broker's refusal; a call never waits more than 10 s. */
    static MqttClient mqtt(String brokerUrl, String user, String password) throws MqttException {
        MqttClient client = new MqttClient(brokerUrl, "t-" + UUID.randomUUID(), new MemoryPersistence());
        client.setTimeToWait(10_000);
        MqttConnectOptions options = new MqttConnectOptions();
        options.setCleanSession(true);
        options.setConnectionTimeout(10);
        options.setMaxInflight(1000); // paho.mqtt.java #551: a synchronous publish may return before it is counted
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

    static void publish(MqttClient client, String topic, String payload) throws MqttException {
        MqttMessage m = new MqttMessage(payload.getBytes(StandardCharsets.UTF_8));
        m.setQos(1);
        client.publish(topic, m);
    }

    static void close(MqttClient client) throws MqttException {
        if (client.isConnected()) {
            client.disconnect();
        }
        client.close();
    }

    /** A registered sensor of a fresh id starting with {@code letter}. */
    static String sensor(JdbcTemplate jdbc, String letter) {
        String id = letter + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'test')", id);
        return id;
    }

    /** The sensor's door state, null until a reading of it was applied. */
    static Integer state(JdbcTemplate jdbc, String sensor) {
        List<Integer> s = jdbc.queryForList("SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, sensor);
        return s.isEmpty() ? null : s.get(0);
    }

    static double count(MeterRegistry meters, String name, String tag, String value) {
        var c = meters.find(name).tag(tag, value).counter();
        return c == null ? 0 : c.count();
    }
}
