package io.lockwatch.ingest;

import java.util.Map;

/**
 * A message that is not a valid reading, to be parked with its reason.
 *
 * @param reason      a stable code, the metric tag and the {@code x-lockwatch-reason} header
 * @param detail      what exactly is wrong, for a person
 * @param body        the message body as received
 * @param properties  what is worth keeping of the original AMQP properties and routing
 */
public record Rejection(Reason reason, String detail, byte[] body, Map<String, Object> properties) {

    public enum Reason {
        BODY_TOO_LARGE, MALFORMED_JSON, NOT_AN_OBJECT, MISSING_SENSOR_ID, INVALID_SENSOR_ID, MISSING_DATA,
        INVALID_DATA, INVALID_TS, TS_IN_FUTURE, INVALID_MESSAGE_ID, TOO_MANY_READINGS, PROCESSING_FAILED,
        /** over MQTT: a topic that names no sensor; and a body that names another sensor than its topic */
        INVALID_TOPIC, TOPIC_MISMATCH,
        /** published by a device (the AMQP user-id RabbitMQ vouches for) for a sensor it does not report for */
        NOT_AUTHORIZED,
        /** the device's health, field by field, as the contract allows it */
        INVALID_BATTERY, INVALID_TAMPER, INVALID_RSSI, INVALID_SNR;

        public String code() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }
}
