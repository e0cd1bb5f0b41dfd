package io.lockwatch.ingest;

/**
 * A valid sensor reading.
 *
 * @param sensorId      the sensor, {@code ^[0-9A-Za-z]{1,16}$}
 * @param data          0 = open, 1 = closed
 * @param measuredAt    epoch milliseconds the sensor measured at (body {@code ts}, else AMQP timestamp, else receipt)
 * @param timeSource    where {@code measuredAt} came from
 * @param receivedAt    epoch milliseconds this service received it
 * @param messageId     the publisher's id (body {@code message_id}, else the AMQP property), or null
 */
public record Reading(String sensorId, int data, long measuredAt, TimeSource timeSource, long receivedAt,
                      String messageId) {

    public enum TimeSource { READING, AMQP_TIMESTAMP, RECEIPT }
}
