package io.lockwatch.adapters;

import io.lockwatch.testing.NetworkBroker;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;
import org.springframework.test.context.TestPropertySource;

/**
 * The Zigbee2MQTT adapter beside RabbitMQ, PostgreSQL and ClickHouse, against Debian's Mosquitto standing in for
 * Zigbee2MQTT's broker ({@code scripts/services.sh up}: 127.0.0.1:1884, no anonymous), logged in with its user.
 */
@ActiveProfiles("external")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
@TestPropertySource(properties = {
        "lockwatch.adapters.zigbee2mqtt.broker-url=tcp://127.0.0.1:1884",
        "lockwatch.adapters.zigbee2mqtt.username=zigbee2mqtt",
        "lockwatch.adapters.zigbee2mqtt.password=zigbee2mqtt",
        "lockwatch.adapters.chirpstack.broker-url=tcp://127.0.0.1:1884",
        "lockwatch.adapters.chirpstack.username=zigbee2mqtt",
        "lockwatch.adapters.chirpstack.password=zigbee2mqtt",
        "lockwatch.adapters.the-things-stack.broker-url=tcp://127.0.0.1:1884",
        "lockwatch.adapters.the-things-stack.username=zigbee2mqtt",
        "lockwatch.adapters.the-things-stack.password=zigbee2mqtt",
        "lockwatch.adapters.shelly.broker-url=tcp://127.0.0.1:1884",
        "lockwatch.adapters.shelly.username=zigbee2mqtt",
        "lockwatch.adapters.shelly.password=zigbee2mqtt"})
class NetworkAdaptersIT extends NetworkAdaptersContract {

    static final NetworkBroker broker = NetworkBroker.mosquitto();

    @Override
    NetworkBroker broker() {
        return broker;
    }
}
