package io.lockwatch.ingest;

/**
 * An event of a sensor, recorded in {@code sensor_events} and handed on to notification and history.
 *
 * @param type          {@code sensor.state_changed}, {@code sensor.connection_lost}, {@code sensor.connection_restored},
 *                      or an alarm's: {@code sensor.alarm_raised}, {@code sensor.alarm_cleared} (recorded by the alarm scan)
 * @param state         the sensor's state after the event (null if never known)
 * @param previousState for a state change, the state before (null for the first reading); else null
 */
public record SensorEvent(String sensorId, long sequence, String type, Integer state, Integer previousState,
                          long occurredAt) {

    public static final String STATE_CHANGED = "sensor.state_changed";
    public static final String CONNECTION_LOST = "sensor.connection_lost";
    public static final String CONNECTION_RESTORED = "sensor.connection_restored";
    public static final String ALARM_RAISED = "sensor.alarm_raised";
    public static final String ALARM_CLEARED = "sensor.alarm_cleared";
    /** A step of an alarm's escalation chain, sent to its step's client alone (recorded by the alarm scan). */
    public static final String ALARM_ESCALATED = "sensor.alarm_escalated";

    public boolean isStateChange() {
        return STATE_CHANGED.equals(type);
    }
}
