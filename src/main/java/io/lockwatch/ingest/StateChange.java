package io.lockwatch.ingest;

/**
 * A sensor's state changed: the event recorded in {@code sensor_events} and handed on to notification and
 * history.
 *
 * @param previousState null for the first reading of a sensor
 */
public record StateChange(String sensorId, long sequence, int state, Integer previousState, long occurredAt) {
}
