package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * Readings over MQTT through RabbitMQ's own MQTT plugin (enabled by {@code scripts/services.sh}, listening on
 * 127.0.0.1:1883): the plugin publishes to amq.topic, which the service binds to its readings exchange. The client is
 * the broker's own user (guest, from loopback), which may publish to any topic, bad ones included: devices, which may
 * not, are {@code DeviceIdentityIT}'s.
 */
@ActiveProfiles("external")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class MqttIngestIT extends MqttIngestContract {

    @Override
    void logIn(org.eclipse.paho.client.mqttv3.MqttConnectOptions options) {
        options.setUserName("guest");
        options.setPassword("guest".toCharArray());
    }

    @Test
    void theSensorsTalkToRabbitMq() {
        assertThat(brokerUrl).isEqualTo("tcp://127.0.0.1:1883");
    }
}
