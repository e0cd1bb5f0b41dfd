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
 * @param health        what the device said of its battery, tamper switch and signal, or null
 */
public record Reading(String sensorId, int data, long measuredAt, TimeSource timeSource, long receivedAt,
                      String messageId, DeviceHealth health) {

    /** A reading of the door alone. */
    public Reading(String sensorId, int data, long measuredAt, TimeSource timeSource, long receivedAt, String messageId) {
        this(sensorId, data, measuredAt, timeSource, receivedAt, messageId, null);
    }

    /**
     * When the reading counts as measured for the sensor's state, its order and its events: its measured time, but
     * never later than its arrival. Dated ahead (within {@code max-clock-skew}), it would make every genuine reading of
     * the next seconds stale, so a forged "closed" sent every few seconds could hide an opening. History keeps the
     * time the reading claims.
     */
    public long appliedAt() {
        return Math.min(measuredAt, receivedAt);
    }

    public enum TimeSource { READING, AMQP_TIMESTAMP, RECEIPT }
}
