package io.lockwatch.ingest;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Readings over MQTT: sensors publish to {@code lockwatch/readings/<sensor id>} (QoS 1), a bare {@code 0} or
 * {@code 1} or a v1 reading, and they join the readings exchange as AMQP ones do.
 *
 * @param enabled       whether that way in is open: on RabbitMQ, the binding from the MQTT plugin's exchange; on the
 *                      embedded default, the MQTT listener and its bridge
 * @param topicExchange RabbitMQ: the exchange its MQTT plugin publishes to ({@code mqtt.exchange}, by default
 *                      {@code amq.topic}), bound to the readings exchange for {@code lockwatch.readings.#}; empty on
 *                      the embedded default, whose broker has no MQTT
 * @param brokerUrl     the MQTT broker that operators' mapping routes subscribe to
 *                      ({@code paho:...?brokerUrl={{lockwatch.mqtt.broker-url}}}): RabbitMQ's MQTT listener, or the
 *                      embedded default's own
 * @param bridge        whether {@code routes/mqtt.camel.yaml} takes what the MQTT listener gets into the readings
 *                      exchange: set by the embedded default, whose broker has no MQTT of its own; RabbitMQ's plugin
 *                      needs no bridge
 */
@ConfigurationProperties("lockwatch.mqtt")
record MqttProperties(boolean enabled, String topicExchange, String brokerUrl, boolean bridge) {
}
