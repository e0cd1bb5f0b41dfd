package io.lockwatch.adapters;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The networks' adapters: each dials out to its network's broker and turns its devices' messages into readings of
 * the sensors that name a profile of it.
 *
 * @param zigbee2mqtt    Zigbee2MQTT's broker
 * @param chirpstack     ChirpStack's broker
 * @param theThingsStack The Things Stack's MQTT server
 * @param shelly         the broker Shelly devices publish to
 */
@ConfigurationProperties("lockwatch.adapters")
public record AdaptersProperties(Zigbee2Mqtt zigbee2mqtt, ChirpStack chirpstack, TheThingsStack theThingsStack,
                                 Shelly shelly) {

    /**
     * The Things Stack v3: its MQTT server's uplink messages, {@code v3/<application>[@<tenant>]/devices/<id>/up}.
     *
     * @param enabled   whether lockwatch subscribes to it
     * @param brokerUrl its MQTT server: {@code ssl://eu1.cloud.thethings.network:8883} (TLS; the JVM's trust store),
     *                  or {@code tcp://host:1883}
     * @param username  the application's id there, with its tenant ({@code app1@ttn} on The Things Network)
     * @param password  an API key of the application that may read its traffic
     * @param clientId  lockwatch's MQTT client id there
     */
    public record TheThingsStack(boolean enabled, String brokerUrl, String username, String password, String clientId) {

        public TheThingsStack {
            Zigbee2Mqtt.loginWhole("the-things-stack", username, password);
        }
    }

    /**
     * Shelly's first-generation devices: a Door/Window's values on {@code shellies/<id>/sensor/<name>}.
     *
     * @param enabled   whether lockwatch subscribes to it
     * @param brokerUrl the broker the devices publish to (each device's MQTT server): {@code tcp://host:1883}, or
     *                  {@code ssl://host:8883} for TLS (the JVM's trust store)
     * @param username  a user of that broker that may read {@code shellies/+/sensor/+}; empty: none
     * @param password  its password
     * @param clientId  lockwatch's MQTT client id there, its session kept across reconnections
     */
    public record Shelly(boolean enabled, String brokerUrl, String username, String password, String clientId) {

        public Shelly {
            Zigbee2Mqtt.loginWhole("shelly", username, password);
        }
    }

    /**
     * ChirpStack v4: its MQTT integration's uplink events, {@code application/<id>/device/<devEui>/event/up}, JSON.
     *
     * @param enabled   whether lockwatch subscribes to it
     * @param brokerUrl the broker ChirpStack's MQTT integration publishes to: {@code tcp://host:1883}, or
     *                  {@code ssl://host:8883} for TLS (the JVM's trust store)
     * @param username  a user of that broker that may read {@code application/+/device/+/event/up}; empty: none
     * @param password  its password
     * @param clientId  lockwatch's MQTT client id there, its session kept across reconnections
     */
    public record ChirpStack(boolean enabled, String brokerUrl, String username, String password, String clientId) {

        public ChirpStack {
            Zigbee2Mqtt.loginWhole("chirpstack", username, password);
        }
    }

    /**
     * Zigbee2MQTT: its devices' state on {@code <base-topic>/<friendly name>}.
     *
     * @param enabled   whether lockwatch subscribes to it
     * @param brokerUrl the broker Zigbee2MQTT publishes to (its {@code mqtt.server}): {@code tcp://host:1883}, or
     *                  {@code ssl://host:8883} for TLS (the JVM's trust store)
     * @param username  a user of that broker that may read {@code <base-topic>/#}; empty: none
     * @param password  its password
     * @param baseTopic Zigbee2MQTT's {@code mqtt.base_topic}
     * @param clientId  lockwatch's MQTT client id there, its session kept across reconnections
     */
    public record Zigbee2Mqtt(boolean enabled, String brokerUrl, String username, String password, String baseTopic,
                              String clientId) {

        public Zigbee2Mqtt {
            loginWhole("zigbee2mqtt", username, password);
        }

        /** Paho sends no login at all unless both are given: a user without a password would go unnoticed. */
        static void loginWhole(String adapter, String username, String password) {
            if (username != null && !username.isEmpty() && (password == null || password.isEmpty())) {
                throw new IllegalArgumentException("lockwatch.adapters." + adapter + ".username is set without a password");
            }
        }
    }
}
