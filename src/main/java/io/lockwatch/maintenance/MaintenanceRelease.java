package io.lockwatch.maintenance;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.lockwatch.ingest.SensorEvent;
import io.lockwatch.infra.tracing.Traces;
import io.lockwatch.notify.Outbox;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Releases the windows that have ended: of what each held, what is still true is sent once, as a new event of its
 * sensor (its next sequence, so after whatever its clients heard meanwhile) dated when it first happened: a lost
 * connection still lost, an alarm still active, whose escalation chain then starts again from now. What ended by
 * itself is dropped. A sensor still inside another open window stays held by that one.
 *
 * <p>A window is released by one scan, in transactions of {@code batch} sensors that each take their held rows
 * (the rows are the proof of what is still to send), so a release cut short by a crash goes on where it stopped and
 * sends nothing twice. The window is marked released when nothing of it is left.
 */
public class MaintenanceRelease {

    private static final Logger log = LoggerFactory.getLogger(MaintenanceRelease.class);

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final int batch;
    private final Traces traces;
    private final Counter sent;

    public MaintenanceRelease(JdbcTemplate jdbc, TransactionTemplate tx, int batch, MeterRegistry meters, Traces traces) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.batch = batch;
        this.traces = traces;
        this.sent = meters.counter("lockwatch.maintenance.released");
    }

    /** @return the events sent for the windows released; their notifications are then due */
    public int release() {
        int total = 0;
        while (true) {
            Integer done = tx.execute(status -> {
                List<UUID> window = jdbc.queryForList("""
                        SELECT id FROM maintenance_windows
                         WHERE released_at IS NULL AND cancelled_at IS NULL AND coalesce(ended_at, ends_at) <= now()
                         ORDER BY coalesce(ended_at, ends_at) LIMIT 1
                           FOR UPDATE SKIP LOCKED""", UUID.class);
                if (window.isEmpty()) {
                    return null;
                }
                int events = jdbc.execute((Connection c) -> releaseSome(c, window.get(0)));
                if (!Boolean.TRUE.equals(jdbc.queryForObject(
                        "SELECT EXISTS (SELECT 1 FROM maintenance_held WHERE window_id = ?)", Boolean.class, window.get(0)))) {
                    jdbc.update("UPDATE maintenance_windows SET released_at = now() WHERE id = ?", window.get(0));
                    log.info("Maintenance window {} released", window.get(0));
                }
                return events;
            });
            if (done == null) {
                break;
            }
            total += done;
        }
        sent.increment(total);
        return total;
    }

    /** One batch of the window's held sensors: taken, and what of them is still true sent. */
    private int releaseSome(Connection c, UUID window) throws SQLException {
        long started = System.currentTimeMillis();
        List<Long> events = new ArrayList<>();
        // a batch of the window's held rows: those of a sensor inside another open window move to it, the others are
        // taken (deleted), with the sensor's state locked for its sequence where still true; a sensor deleted
        // meanwhile has none
        try (PreparedStatement ps = c.prepareStatement("""
                WITH batch AS (
                    SELECT h.sensor_id, h.kind, maintenance_window_of(h.sensor_id, s.address) AS other
                      FROM (SELECT sensor_id, kind FROM maintenance_held WHERE window_id = ?
                             ORDER BY sensor_id, kind LIMIT ?) h
                      LEFT JOIN sensors s ON s.id = h.sensor_id),
                moved_on AS (
                    UPDATE maintenance_held h SET window_id = b.other FROM batch b
                     WHERE h.sensor_id = b.sensor_id AND h.kind = b.kind AND b.other IS NOT NULL),
                taken AS (
                    DELETE FROM maintenance_held h USING batch b
                     WHERE h.sensor_id = b.sensor_id AND h.kind = b.kind AND b.other IS NULL
                    RETURNING h.sensor_id, h.kind, h.event_id, h.alarm_id),
                true_now AS (
                    SELECT t.*, held.occurred_at,
                           row_number() OVER (PARTITION BY t.sensor_id ORDER BY t.kind DESC) AS k,
                           count(*) OVER (PARTITION BY t.sensor_id) AS n
                      FROM taken t
                      JOIN sensor_events held ON held.id = t.event_id
                      JOIN sensor_state st ON st.sensor_id = t.sensor_id
                      LEFT JOIN alarms a ON a.id = t.alarm_id
                     WHERE t.kind = 'connectivity' AND st.connectivity = 'lost'
                        OR t.kind <> 'connectivity' AND a.cleared_at IS NULL),
                moved AS (
                    UPDATE sensor_state s SET sequence = s.sequence + x.n
                      FROM (SELECT DISTINCT sensor_id, n FROM true_now) x
                     WHERE s.sensor_id = x.sensor_id
                    RETURNING s.sensor_id, s.sequence, s.state),
                restarted AS (
                    UPDATE alarm_escalations e SET due_at = now() + make_interval(secs => e.after_seconds)
                      FROM true_now t
                     WHERE e.alarm_id = t.alarm_id AND e.sent_at IS NULL AND e.stopped_at IS NULL),
                -- each sensor's new sequence and state, looked up by its id in one map: a join of the two CTEs is
                -- planned as a nested loop (each estimated at one row), 1.8 s for a batch of 5,000
                states AS MATERIALIZED (
                    SELECT jsonb_object_agg(sensor_id, jsonb_build_array(sequence, state)) AS m FROM moved)
                INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at, alarm_id)
                SELECT t.sensor_id, (st.m -> t.sensor_id ->> 0)::bigint - t.n + t.k,
                       CASE t.kind WHEN 'connectivity' THEN ? WHEN 'battery_low' THEN ? WHEN 'tampered' THEN ? ELSE ? END,
                       (st.m -> t.sensor_id ->> 1)::smallint,
                       t.occurred_at, t.alarm_id
                  FROM true_now t CROSS JOIN states st
                 WHERE st.m -> t.sensor_id IS NOT NULL
                RETURNING id""")) {
            ps.setObject(1, window);
            ps.setInt(2, batch);
            ps.setString(3, SensorEvent.CONNECTION_LOST);
            ps.setString(4, SensorEvent.BATTERY_LOW);
            ps.setString(5, SensorEvent.TAMPERED);
            ps.setString(6, SensorEvent.ALARM_RAISED);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    events.add(rs.getLong(1));
                }
            }
        }
        Outbox.notificationsFor(c, events, traces.scanRound("maintenance: released", started, events.size()));
        return events.size();
    }
}
