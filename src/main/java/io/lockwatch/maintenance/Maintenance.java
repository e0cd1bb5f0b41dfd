package io.lockwatch.maintenance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.lockwatch.ingest.SensorEvent;

/**
 * What an open maintenance window does to the events of its sensors, as they are recorded: each is marked
 * {@code maintenance}; a lost connection or a raised alarm (of each type) is held (remembered, not sent), and so is the restoring or
 * the clearing of one held, which then needs no sending at all. State changes, and the end of what was sent before
 * the window, are sent as ever. {@link MaintenanceRelease} sends what is still true when the window ends.
 */
public final class Maintenance {

    private Maintenance() {
    }

    /**
     * Over {@code inside(id, sensor_id, type, alarm_id, window_id)}, events a window covers: holds the lost connections
     * and raised alarms, drops what ends one held; {@code held(event_id)} names the events not to be notified.
     */
    private static final String HOLDING = """
            holding AS (
                INSERT INTO maintenance_held (sensor_id, kind, window_id, event_id, alarm_id)
                SELECT sensor_id, CASE type WHEN 'sensor.connection_lost' THEN 'connectivity'
                                            WHEN 'sensor.battery_low' THEN 'battery_low'
                                            WHEN 'sensor.tampered' THEN 'tampered' ELSE 'alarm' END,
                       window_id, id, alarm_id
                  FROM inside WHERE type = 'sensor.connection_lost' OR type IN %1$s
                ON CONFLICT (sensor_id, kind) DO UPDATE
                   SET window_id = excluded.window_id, event_id = excluded.event_id, alarm_id = excluded.alarm_id
                RETURNING event_id),
            resolved AS (
                DELETE FROM maintenance_held h USING inside
                 WHERE h.sensor_id = inside.sensor_id
                   AND (inside.type = 'sensor.connection_restored' AND h.kind = 'connectivity'
                        OR inside.type IN %2$s AND h.alarm_id = inside.alarm_id)
                RETURNING inside.id),
            held AS (
                SELECT event_id FROM holding UNION ALL SELECT id FROM resolved)""".formatted(
                    SensorEvent.ALARM_RAISINGS_SQL, SensorEvent.ALARM_CLEARINGS_SQL);

    /** Whether any window may be open: evaluated once a statement, so events pay one index probe while none is. */
    private static final String ANY_OPEN = """
            EXISTS (SELECT 1 FROM maintenance_windows ow
                     WHERE ow.released_at IS NULL AND ow.cancelled_at IS NULL AND ow.starts_at <= now())""";

    /** Of these events, just recorded in this transaction, those a window holds: they are not to be notified. */
    public static Set<Long> held(Connection c, List<Long> eventIds) throws SQLException {
        Set<Long> held = new HashSet<>();
        try (PreparedStatement ps = c.prepareStatement("""
                WITH inside AS (
                    SELECT e.id, e.sensor_id, e.type, e.alarm_id, w.window_id
                      FROM sensor_events e
                      JOIN sensors s ON s.id = e.sensor_id
                      CROSS JOIN LATERAL (SELECT maintenance_window_of(e.sensor_id, s.address) AS window_id) w
                     WHERE e.id = ANY (?) AND w.window_id IS NOT NULL AND %s),
                marked AS (
                    UPDATE sensor_events e SET maintenance = true FROM inside WHERE e.id = inside.id),
                %s
                SELECT event_id FROM held""".formatted(ANY_OPEN, HOLDING))) {
            ps.setArray(1, c.createArrayOf("int8", eventIds.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    held.add(rs.getLong(1));
                }
            }
        }
        return held;
    }

    /**
     * The {@code maintenance} mark of an event of the sensor {@code sensor} (an SQL expression) as it is recorded:
     * whether a window covers the sensor now.
     */
    public static String coveredNow(String sensor) {
        return "CASE WHEN " + ANY_OPEN + " THEN maintenance_window_of(" + sensor
                + ", (SELECT s.address FROM sensors s WHERE s.id = " + sensor + ")) IS NOT NULL ELSE false END";
    }

    /**
     * CTEs that hold what a window holds of the events of {@code recorded}: a CTE of events just inserted, their
     * {@code maintenance} marked with {@link #coveredNow}, with their {@code id, sensor_id, type, alarm_id,
     * maintenance}. As {@link #held} does, in the statement that records them; {@code held(event_id)} then names
     * those not to be notified.
     */
    public static String holding(String recorded) {
        return """
                inside AS (
                    SELECT r.id, r.sensor_id, r.type, r.alarm_id, maintenance_window_of(r.sensor_id, s.address) AS window_id
                      FROM %s r JOIN sensors s ON s.id = r.sensor_id
                     WHERE r.maintenance),
                %s""".formatted(recorded, HOLDING);
    }
}
