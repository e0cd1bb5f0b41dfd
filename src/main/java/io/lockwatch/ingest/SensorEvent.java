package io.lockwatch.ingest;

/**
 * An event of a sensor, recorded in {@code sensor_events} and handed on to notification and history.
 *
 * @param type          {@code sensor.state_changed}, {@code sensor.connection_lost}, {@code sensor.connection_restored},
 *                      or an alarm's (recorded by the alarm scan): a door's {@code sensor.alarm_raised},
 *                      {@code sensor.alarm_cleared}; a battery's {@code sensor.battery_low}, {@code sensor.battery_restored};
 *                      a tamper switch's {@code sensor.tampered}, {@code sensor.tamper_cleared}
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
    public static final String BATTERY_LOW = "sensor.battery_low";
    public static final String BATTERY_RESTORED = "sensor.battery_restored";
    public static final String TAMPERED = "sensor.tampered";
    public static final String TAMPER_CLEARED = "sensor.tamper_cleared";
    /** The events that raise an alarm, of each type: an SQL list. */
    public static final String ALARM_RAISINGS_SQL = "('sensor.alarm_raised', 'sensor.battery_low', 'sensor.tampered')";
    /** The events that clear an alarm, of each type: an SQL list. */
    public static final String ALARM_CLEARINGS_SQL = "('sensor.alarm_cleared', 'sensor.battery_restored', 'sensor.tamper_cleared')";

    public boolean isStateChange() {
        return STATE_CHANGED.equals(type);
    }
}
