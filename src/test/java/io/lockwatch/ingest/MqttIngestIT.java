package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * Readings over MQTT through RabbitMQ's own MQTT plugin (enabled by {@code scripts/services.sh}, listening on
 * 127.0.0.1:1883): the plugin publishes to amq.topic, which the service binds to its readings exchange.
 */
@ActiveProfiles("external")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class MqttIngestIT extends MqttIngestContract {

    @Test
    void theSensorsTalkToRabbitMq() {
        assertThat(brokerUrl).isEqualTo("tcp://127.0.0.1:1883");
    }
}
