package io.lockwatch.alarms;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

import io.lockwatch.heartbeat.HeartbeatProperties;
import io.lockwatch.ingest.ReadingsBacklog;
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
 * Raises the alarm of every door open past its deadline, and clears the alarm of every door that has closed,
 * set-based, in transactions of {@code scanBatch}; each with its event ({@code sensor.alarm_raised},
 * {@code sensor.alarm_cleared}) and that event's notifications, in the same transaction.
 *
 * <p>The deadline is ingest's: the measured time of the reading that opened the door plus the threshold, kept in
 * {@code sensor_state.alarm_due_at} (indexed where set). Raising takes it back to null, and ingest keeps it null for
 * the rest of that opening, so an opening raises at most once; the alarms table's unique indexes (one per opening,
 * one active per sensor and type) hold that even for two scans at once. A battery's and a tamper switch's alarms are
 * judged last, from what ingest marked ({@link #healthAlarms(Connection)}). Clearing comes first in a scan, so that a door closed
 * and opened again since the last scan has its old alarm cleared before its new one is raised. An alarm is cleared
 * at the measured time of the reading that closed the door; losing the sensor's connection does not clear it.
 *
 * <p>An alarm raised gets the steps of its sensor's escalation chains as they are then, each due its delay after the
 * alarm was recorded (not its nominal time, which a late scan or an outage may have put in the past). A due step of
 * an alarm neither acknowledged nor cleared is sent once, as its own event ({@code sensor.alarm_escalated}, the
 * sensor's next sequence) to its step's client only. Sending a step locks its
 * alarm and acknowledging waits for that lock, so a step is sent before an acknowledgement or not at all; what an
 * acknowledgement or a clearing finds still pending of a sent step is cancelled with the steps still to come (one on
 * the wire then is not tried again: the claim cancels it). The
 * chains of the sensor's links (a linked client's own) run beside its own, each step sent once. The clients sent a
 * step hear the alarm's clearing, linked or not, whatever they filter; so do those told of its raising.
 *
 * <p>Like the heartbeat, the scan waits while readings are queued beyond the heartbeat's {@code max-backlog}: a door
 * closed during a downtime has its closing reading still in the broker.
 */
public class AlarmScan {

    private static final Logger log = LoggerFactory.getLogger(AlarmScan.class);
    static final String DOOR_OPEN_TOO_LONG = "door_open_too_long";
    static final String BATTERY_LOW = "battery_low";
    static final String TAMPERED = "tampered";

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final AlarmProperties props;
    private final ReadingsBacklog backlog;
    private final long maxBacklog;
    private final Counter raised;
    private final Counter cleared;
    private final Counter escalated;
    private final Counter deferred;
    private final Traces traces;

    public AlarmScan(JdbcTemplate jdbc, TransactionTemplate tx, AlarmProperties props, ReadingsBacklog backlog,
                     HeartbeatProperties heartbeat, MeterRegistry meters, Traces traces) {
        this.traces = traces;
        this.jdbc = jdbc;
        this.tx = tx;
        this.props = props;
        this.backlog = backlog;
        this.maxBacklog = heartbeat.maxBacklog();
        this.raised = meters.counter("lockwatch.alarms.raised");
        this.cleared = meters.counter("lockwatch.alarms.cleared");
        this.escalated = meters.counter("lockwatch.alarms.escalated");
        this.deferred = meters.counter("lockwatch.alarms.scans.deferred");
    }

    /** @return the alarm events recorded by this scan; their notifications are then due */
    public int scan() {
        Long queued = backlog.messages();
        if (queued != null && queued > maxBacklog) {
            deferred.increment();
            log.info("Alarm scan deferred: {} readings still queued", queued == Long.MAX_VALUE ? "an unknown number of" : queued);
            return 0;
        }
        int closed = inBatches(this::clearClosed);
        int opened = raiseScheduled() + inBatches(this::raiseDue);
        int steps = inBatches(this::escalateDue);
        // last: a fault of its own holds no door's alarm or escalation back
        int[] health = healthAlarms();
        opened += health[0];
        closed += health[1];
        cleared.increment(closed);
        raised.increment(opened);
        escalated.increment(steps);
        if (closed + opened + steps > 0) {
            log.info("Alarms: {} raised, {} cleared, {} escalation steps sent", opened, closed, steps);
        }
        return closed + opened + steps;
    }

    private interface Step {
        int run(Connection c) throws SQLException;
    }

    /** Runs a step in transactions until one does less than a batch. */
    private int inBatches(Step step) {
        int total = 0;
        int n;
        do {
            n = tx.execute(status -> jdbc.execute((Connection c) -> step.run(c)));
            total += n;
        } while (n == props.scanBatch());
        return total;
    }

    /**
     * The doors open past their deadline: their deadline is taken (null), their sequence moved on, the alarm
     * recorded with its event, at the deadline. Locked rows are skipped: ingest holds them, and may be closing the
     * door right now.
     */
    private int raiseDue(Connection c) throws SQLException {
        return raise(c, null);
    }

    /**
     * The due doors of sensors with an expected-open schedule, a batch at a time: a deadline the schedule puts later
     * is moved there (computed from the opening, so again the same by any scan), the others raised.
     */
    private int raiseScheduled() {
        int raisedHere = 0;
        int listed;
        do {
            int[] counts = tx.execute(status -> jdbc.execute((Connection c) -> {
                List<String> dueNow = new ArrayList<>();
                int n = 0;
                try (PreparedStatement ps = c.prepareStatement("""
                        SELECT st.sensor_id, st.state_changed_at, coalesce(st.open_alarm_seconds, ?::integer),
                               sch.time_zone, sch.ranges::text, st.alarm_due_at
                          FROM sensor_state st JOIN sensor_open_schedules sch ON sch.sensor_id = st.sensor_id
                         WHERE st.alarm_due_at < now() AND st.state = 0
                         ORDER BY st.alarm_due_at
                         LIMIT ?
                           FOR UPDATE OF st SKIP LOCKED""")) {
                    ps.setObject(1, defaultOpenSeconds(), java.sql.Types.INTEGER);
                    ps.setInt(2, props.scanBatch());
                    try (ResultSet rs = ps.executeQuery(); PreparedStatement later = c.prepareStatement(
                            "UPDATE sensor_state SET alarm_due_at = ? WHERE sensor_id = ?")) {
                        java.time.Instant now = java.time.Instant.now();
                        while (rs.next()) {
                            n++;
                            OpenSchedule schedule = OpenSchedules.parse(rs.getString(4), rs.getString(5));
                            java.time.Instant due = schedule.alarmDue(rs.getTimestamp(2).toInstant(), rs.getInt(3));
                            if (due.isAfter(now)) {
                                later.setTimestamp(1, java.sql.Timestamp.from(due));
                                later.setString(2, rs.getString(1));
                                later.addBatch();
                            } else {
                                dueNow.add(rs.getString(1));
                            }
                        }
                        later.executeBatch();
                    }
                }
                return new int[] {n, dueNow.isEmpty() ? 0 : raise(c, dueNow.toArray(String[]::new))};
            }));
            listed = counts[0];
            raisedHere += counts[1];
        } while (listed == props.scanBatch());
        return raisedHere;
    }

    private Integer defaultOpenSeconds() {
        return props.openAfter() == null ? null : (int) props.openAfter().toSeconds();
    }

    /**
     * The escalation steps of the alarms just recorded ({@code alarm(id, sensor_id)}): the chain as it is now, since a
     * later change of the sensor's chain is for its later alarms. Its delays count from now, when the alarm can first
     * be seen and acknowledged: one raised late (a scan's interval, or an outage) still gives whoever answers it each
     * step's whole delay.
     */
    private static final String CHAIN = """
            chain AS (
                INSERT INTO alarm_escalations (alarm_id, link_client_id, step, after_seconds, client_id, due_at)
                SELECT a.id, NULL, st.step, st.after_seconds, st.client_id, now() + make_interval(secs => st.after_seconds)
                  FROM alarm a JOIN sensor_escalation_steps st ON st.sensor_id = a.sensor_id
                UNION ALL -- and the chains of its links
                SELECT a.id, l.client_id, l.step, l.after_seconds, l.to_client_id,
                       now() + make_interval(secs => l.after_seconds)
                  FROM alarm a JOIN link_escalation_steps l ON l.sensor_id = a.sensor_id)""";

    /**
     * Over {@code done(id)}, the alarms just cleared: their steps not yet sent stop, and what of a sent one still waits
     * for its client is cancelled.
     */
    private static final String STEPS_STOPPED = """
            stopped AS (
                UPDATE alarm_escalations e SET stopped_at = now() FROM done
                 WHERE e.alarm_id = done.id AND e.sent_at IS NULL AND e.stopped_at IS NULL),
            unsent AS (
                UPDATE notifications n SET status = 'cancelled', finished_at = now()
                  FROM alarm_escalations e JOIN done ON done.id = e.alarm_id
                 WHERE n.event_id = e.event_id AND n.status = 'pending')""";

    /** The due doors, or (with {@code only}) those of them: sensors with a schedule only when named. */
    private int raise(Connection c, String[] only) throws SQLException {
        long started = System.currentTimeMillis();
        List<Long> events = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                WITH due AS (
                    SELECT sensor_id, alarm_due_at
                      FROM sensor_state st
                     WHERE alarm_due_at < now() AND state = 0
                       AND (?::text[] IS NULL
                            AND NOT EXISTS (SELECT 1 FROM sensor_open_schedules sch WHERE sch.sensor_id = st.sensor_id)
                            OR sensor_id = ANY (?::text[]))
                     ORDER BY alarm_due_at
                     LIMIT ?
                       FOR UPDATE SKIP LOCKED),
                taken AS (
                    UPDATE sensor_state s
                       SET alarm_due_at = NULL, sequence = s.sequence + 1
                      FROM due
                     WHERE s.sensor_id = due.sensor_id
                    RETURNING s.sensor_id, s.sequence, s.state_changed_at, due.alarm_due_at, s.open_alarm_seconds),
                alarm AS (
                    INSERT INTO alarms (sensor_id, type, opened_at, threshold_seconds, raised_at, raised_sequence, severity)
                    SELECT t.sensor_id, ?, t.state_changed_at,
                           -- a schedule may have put the deadline past the threshold
                           coalesce(t.open_alarm_seconds, ?::integer,
                                    round(extract(epoch FROM t.alarm_due_at - t.state_changed_at))::int),
                           t.alarm_due_at, t.sequence,
                           coalesce((SELECT open_alarm_severity FROM sensors WHERE id = t.sensor_id), 'major')
                      FROM taken t
                    ON CONFLICT DO NOTHING
                    RETURNING id, sensor_id, raised_sequence, raised_at),
                %s
                INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at, alarm_id)
                SELECT sensor_id, raised_sequence, ?, 0, raised_at, id FROM alarm
                RETURNING id""".formatted(CHAIN))) {
            ps.setArray(1, only == null ? null : c.createArrayOf("text", only));
            ps.setArray(2, only == null ? null : c.createArrayOf("text", only));
            ps.setInt(3, props.scanBatch());
            ps.setString(4, DOOR_OPEN_TOO_LONG);
            ps.setObject(5, defaultOpenSeconds(), java.sql.Types.INTEGER);
            ps.setString(6, SensorEvent.ALARM_RAISED);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    events.add(rs.getLong(1));
                }
            }
        }
        Outbox.notificationsFor(c, events, traces.scanRound("alarms: raised", started, events.size()));
        return events.size();
    }

    /**
     * What one marked sensor's health says now, with its active health alarms: its battery, its tamper switch and
     * when a reading last opened it since the last judgement (an opening closed again before this one is not lost).
     */
    private record HealthSaid(String sensorId, Double battery, java.sql.Timestamp batteryAt, Boolean tamper,
                              java.sql.Timestamp tamperAt, java.sql.Timestamp tamperOpenedAt, java.util.UUID batteryAlarm,
                              java.util.UUID tamperAlarm) {
    }

    /** Events recorded by a round of the health alarms, and how many marked sensors it took. */
    private record HealthRound(int raised, int cleared, int taken) {
    }

    /**
     * The health alarms of every marked sensor, at once (ingest's wake-up, beside the scan): @return the alarm events
     * recorded, whose notifications are then due
     */
    public int judgeHealth() {
        int[] health = healthAlarms();
        raised.increment(health[0]);
        cleared.increment(health[1]);
        return health[0] + health[1];
    }

    /** The health alarms of every marked sensor, a batch at a time: {raised, cleared}. */
    private int[] healthAlarms() {
        int raisedHere = 0;
        int clearedHere = 0;
        HealthRound round;
        do {
            round = tx.execute(status -> jdbc.execute((Connection c) -> healthAlarms(c)));
            raisedHere += round.raised();
            clearedHere += round.cleared();
        } while (round.taken() == props.scanBatch());
        return new int[] {raisedHere, clearedHere};
    }

    /**
     * The sensors whose battery or tamper switch said something new (ingest marks them): unmarked, and their
     * {@code battery_low} and {@code tampered} alarms raised or cleared as their health now says, each with its event
     * at the measured time of the reading that said it. Their state rows are locked first (skipped where ingest holds
     * them: they stay marked), then their health rows, waited for: ingest writes a repeat's health without taking its
     * state row, so only the health row's own lock makes the judgement the newest value's, and the unmarking its own. A battery at or below the
     * threshold raises; back at the threshold plus the hysteresis (or with the threshold turned off) it clears. A
     * tamper switch opened raises, closed clears; opened and closed again since the last judgement, both. A tampered
     * alarm escalates by the sensor's chains as a door's does; a battery's does not (nobody is called out at night
     * for a battery).
     */
    private HealthRound healthAlarms(Connection c) throws SQLException {
        long started = System.currentTimeMillis();
        List<String> locked = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT st.sensor_id FROM sensor_health h JOIN sensor_state st ON st.sensor_id = h.sensor_id
                 WHERE h.alarm_check
                 ORDER BY h.sensor_id COLLATE "C"
                 LIMIT ?
                   FOR UPDATE OF st SKIP LOCKED""")) {
            ps.setInt(1, props.scanBatch());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    locked.add(rs.getString(1));
                }
            }
        }
        if (locked.isEmpty()) {
            return new HealthRound(0, 0, 0);
        }
        java.sql.Array ids = c.createArrayOf("varchar", locked.toArray());
        List<HealthSaid> marked = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT h.sensor_id, h.battery, h.battery_at, h.tamper, h.tamper_at, h.tamper_opened_at,
                       (SELECT a.id FROM alarms a
                         WHERE a.sensor_id = h.sensor_id AND a.type = 'battery_low' AND a.cleared_at IS NULL),
                       (SELECT a.id FROM alarms a
                         WHERE a.sensor_id = h.sensor_id AND a.type = 'tampered' AND a.cleared_at IS NULL)
                  FROM sensor_health h
                 WHERE h.sensor_id = ANY (?) AND h.alarm_check
                 -- in ingest's order (a Java TreeMap's: by code point, as COLLATE "C")
                 ORDER BY h.sensor_id COLLATE "C"
                   FOR UPDATE OF h""")) {
            ps.setArray(1, ids);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    marked.add(new HealthSaid(rs.getString(1), rs.getObject(2) == null ? null : rs.getDouble(2),
                            rs.getTimestamp(3), (Boolean) rs.getObject(4, Boolean.class), rs.getTimestamp(5),
                            rs.getTimestamp(6), rs.getObject(7, java.util.UUID.class), rs.getObject(8, java.util.UUID.class)));
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement(
                "UPDATE sensor_health SET alarm_check = false, tamper_opened_at = NULL WHERE sensor_id = ANY (?)")) {
            ps.setArray(1, ids);
            ps.executeUpdate();
        }
        int threshold = props.batteryLowPercent();
        List<Long> raisings = new ArrayList<>();
        List<Long> clearings = new ArrayList<>();
        for (HealthSaid h : marked) {
            boolean batteryLow = h.battery() != null && threshold > 0 && h.battery() <= threshold && h.batteryAlarm() == null;
            boolean batteryBack = h.batteryAlarm() != null
                    && (threshold == 0 || h.battery() != null && h.battery() >= threshold + props.batteryLowHysteresis());
            boolean opened = Boolean.TRUE.equals(h.tamper()) || h.tamperOpenedAt() != null;
            boolean tampered = opened && h.tamperAlarm() == null;
            // closed now: the alarm raised here, or the one active before
            boolean tamperOver = Boolean.FALSE.equals(h.tamper()) && (tampered || h.tamperAlarm() != null);
            int n = (batteryLow || batteryBack ? 1 : 0) + (tampered ? 1 : 0) + (tamperOver ? 1 : 0);
            if (n == 0) {
                continue;
            }
            long next;
            Integer state;
            try (PreparedStatement ps = c.prepareStatement(
                    "UPDATE sensor_state SET sequence = sequence + ? WHERE sensor_id = ? RETURNING sequence, state")) {
                ps.setInt(1, n);
                ps.setString(2, h.sensorId());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    next = rs.getLong(1) - n + 1;
                    state = rs.getObject(2, Integer.class);
                }
            }
            if (batteryLow) {
                Raised low = raiseHealth(c, h.sensorId(), BATTERY_LOW, h.batteryAt(), next++, state,
                        props.batteryLowSeverity(), h.battery(), threshold);
                if (low != null) {
                    raisings.add(low.event());
                }
            } else if (batteryBack) {
                clearings.addAll(clearHealth(c, h.batteryAlarm(), h.batteryAt(), next++, state, SensorEvent.BATTERY_RESTORED));
            }
            java.util.UUID tamperAlarm = h.tamperAlarm();
            if (tampered) {
                Raised cover = raiseHealth(c, h.sensorId(), TAMPERED,
                        h.tamperOpenedAt() != null ? h.tamperOpenedAt() : h.tamperAt(), next++, state, props.tamperSeverity(),
                        null, null);
                if (cover != null) {
                    raisings.add(cover.event());
                }
                tamperAlarm = cover == null ? null : cover.alarm();
            }
            if (tamperOver && tamperAlarm != null) {
                clearings.addAll(clearHealth(c, tamperAlarm, h.tamperAt(), next, state, SensorEvent.TAMPER_CLEARED));
            }
        }
        if (!raisings.isEmpty() || !clearings.isEmpty()) {
            List<Long> events = new ArrayList<>(raisings);
            events.addAll(clearings);
            String trace = traces.scanRound("alarms: health", started, events.size());
            Outbox.notificationsFor(c, events, trace);
            Outbox.notificationsTo(c, stepClientsOf(c, clearings, false), trace);
        }
        return new HealthRound(raisings.size(), clearings.size(), locked.size());
    }

    /** A health alarm raised, and its event. */
    private record Raised(long event, java.util.UUID alarm) {
    }

    /** A health alarm raised at {@code at}, its event numbered {@code sequence}; null if it was not (one is active). */
    private Raised raiseHealth(Connection c, String sensor, String type, java.sql.Timestamp at, long sequence,
                                   Integer state, String severity, Double battery, Integer thresholdPercent)
            throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                WITH alarm AS (
                    INSERT INTO alarms (sensor_id, type, opened_at, raised_at, raised_sequence, severity, battery,
                                        threshold_percent)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT DO NOTHING
                    RETURNING id, sensor_id, raised_sequence, raised_at)%s
                INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at, alarm_id)
                SELECT sensor_id, raised_sequence, ?, ?, raised_at, id FROM alarm
                RETURNING id, alarm_id""".formatted(TAMPERED.equals(type) ? ",\n" + CHAIN : ""))) {
            ps.setString(1, sensor);
            ps.setString(2, type);
            ps.setTimestamp(3, at);
            ps.setTimestamp(4, at);
            ps.setLong(5, sequence);
            ps.setString(6, severity);
            ps.setObject(7, battery, java.sql.Types.REAL);
            ps.setObject(8, thresholdPercent, java.sql.Types.SMALLINT);
            ps.setString(9, TAMPERED.equals(type) ? SensorEvent.TAMPERED : SensorEvent.BATTERY_LOW);
            ps.setObject(10, state, java.sql.Types.SMALLINT);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Raised(rs.getLong(1), rs.getObject(2, java.util.UUID.class)) : null;
            }
        }
    }

    /**
     * A health alarm cleared at {@code at}, with its event numbered {@code sequence}: its steps not yet sent are
     * stopped, and a sent one still waiting for its client is not sent. @return the event's id, or none
     */
    private static List<Long> clearHealth(Connection c, java.util.UUID alarm, java.sql.Timestamp at, long sequence,
                                          Integer state, String type) throws SQLException {
        List<Long> events = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                WITH done AS (
                    UPDATE alarms SET cleared_at = greatest(?, opened_at) WHERE id = ? AND cleared_at IS NULL
                    RETURNING id, sensor_id, cleared_at),
                %s
                INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at, alarm_id)
                SELECT sensor_id, ?, ?, ?, cleared_at, id FROM done
                RETURNING id""".formatted(STEPS_STOPPED))) {
            ps.setTimestamp(1, at);
            ps.setObject(2, alarm);
            ps.setLong(3, sequence);
            ps.setString(4, type);
            ps.setObject(5, state, java.sql.Types.SMALLINT);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    events.add(rs.getLong(1));
                }
            }
        }
        return events;
    }

    /**
     * The due steps of alarms neither acknowledged nor cleared, each as its own event at its due time, the sensor's
     * next sequence (several steps of one alarm due at once take consecutive ones, in step order), and a
     * notification for its step's client alone. Steps, alarms and sensors locked elsewhere are skipped: an
     * acknowledgement or a clearing may be under way, and decides first.
     */
    private int escalateDue(Connection c) throws SQLException {
        long started = System.currentTimeMillis();
        List<Outbox.To> events = new ArrayList<>();
        // a step whose client was deleted since the alarm was raised goes to nobody: it is stopped, not sent
        try (PreparedStatement ps = c.prepareStatement("""
                UPDATE alarm_escalations e SET stopped_at = now()
                 WHERE e.sent_at IS NULL AND e.stopped_at IS NULL AND e.due_at <= now()
                   AND NOT EXISTS (SELECT 1 FROM clients cl WHERE cl.id = e.client_id)""")) {
            ps.executeUpdate();
        }
        try (PreparedStatement ps = c.prepareStatement("""
                WITH due AS (
                    SELECT e.alarm_id, e.link_client_id, e.step, e.client_id, e.due_at, a.sensor_id
                      FROM alarm_escalations e JOIN alarms a ON a.id = e.alarm_id
                           -- asked of the joined rows only: OFFSET 0 keeps it out of the scan of alarms, which a
                           -- plan made on stale statistics (a surge of alarms) runs once per due step
                           CROSS JOIN LATERAL (SELECT maintenance_window_of(a.sensor_id,
                                   (SELECT address FROM sensors WHERE id = a.sensor_id)) AS window_id OFFSET 0) m
                     WHERE e.sent_at IS NULL AND e.stopped_at IS NULL AND e.due_at <= now()
                       AND a.acknowledged_at IS NULL AND a.cleared_at IS NULL
                       AND EXISTS (SELECT 1 FROM clients cl WHERE cl.id = e.client_id)
                       -- nor while a maintenance window holds the alarm, or is open over its sensor
                       AND NOT EXISTS (SELECT 1 FROM maintenance_held h WHERE h.sensor_id = a.sensor_id AND h.alarm_id = a.id)
                       AND m.window_id IS NULL
                     ORDER BY e.due_at, e.step -- a chain's delays grow with its steps: its steps go in order
                     LIMIT ?
                       FOR UPDATE OF e, a SKIP LOCKED),
                sensors AS (
                    SELECT s.sensor_id FROM sensor_state s WHERE s.sensor_id IN (SELECT sensor_id FROM due)
                       FOR UPDATE SKIP LOCKED),
                numbered AS (
                    SELECT d.*, row_number() OVER (PARTITION BY d.sensor_id ORDER BY d.due_at, d.step, d.link_client_id) AS k,
                           count(*) OVER (PARTITION BY d.sensor_id) AS n
                      FROM due d WHERE d.sensor_id IN (SELECT sensor_id FROM sensors)),
                moved AS (
                    UPDATE sensor_state s SET sequence = s.sequence + x.n
                      FROM (SELECT DISTINCT sensor_id, n FROM numbered) x
                     WHERE s.sensor_id = x.sensor_id
                    RETURNING s.sensor_id, s.sequence, s.state),
                sent AS (
                    INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at, alarm_id, escalation_step,
                                               escalation_link_client_id)
                    SELECT nb.sensor_id, m.sequence - nb.n + nb.k, ?, m.state, nb.due_at, nb.alarm_id, nb.step,
                           nb.link_client_id
                      FROM numbered nb JOIN moved m ON m.sensor_id = nb.sensor_id
                    RETURNING id, alarm_id, escalation_step, escalation_link_client_id)
                UPDATE alarm_escalations e SET sent_at = now(), event_id = sent.id
                  FROM sent WHERE e.alarm_id = sent.alarm_id AND e.step = sent.escalation_step
                              AND e.link_client_id IS NOT DISTINCT FROM sent.escalation_link_client_id
                RETURNING sent.id, e.client_id""")) {
            ps.setInt(1, props.scanBatch());
            ps.setString(2, SensorEvent.ALARM_ESCALATED);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    events.add(new Outbox.To(rs.getLong(1), rs.getObject(2, java.util.UUID.class)));
                }
            }
        }
        Outbox.notificationsTo(c, events, traces.scanRound("alarms: escalated", started, events.size()));
        return events.size();
    }

    /**
     * The active alarms whose door is no longer in the opening that raised them: cleared at the measured time of
     * the first reading that closed it after the alarm, with their event. The deletion of a sensor closes its alarm
     * with its clearing (V42); one still found active of a sensor deleted before that, or registered again since,
     * is closed without one.
     */
    private int clearClosed(Connection c) throws SQLException {
        long started = System.currentTimeMillis();
        List<Long> events = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                WITH closing AS (
                    SELECT a.id, a.sensor_id, a.raised_sequence
                      FROM alarms a JOIN sensor_state s ON s.sensor_id = a.sensor_id
                     WHERE a.cleared_at IS NULL AND a.type = 'door_open_too_long'
                       AND (s.state IS DISTINCT FROM 0 OR s.state_changed_at <> a.opened_at)
                       AND NOT EXISTS (SELECT 1 FROM sensors r WHERE r.id = a.sensor_id AND r.created_at > a.recorded_at)
                     ORDER BY a.sensor_id
                     LIMIT ?
                       FOR UPDATE OF s SKIP LOCKED),
                moved AS (
                    UPDATE sensor_state s
                       SET sequence = s.sequence + 1
                      FROM closing
                     WHERE s.sensor_id = closing.sensor_id
                    RETURNING s.sensor_id, s.sequence, s.state),
                done AS (
                    UPDATE alarms a
                       SET cleared_at = coalesce(
                               (SELECT e.occurred_at FROM sensor_events e
                                 WHERE e.sensor_id = closing.sensor_id AND e.sequence > closing.raised_sequence
                                   AND e.type = ? AND e.state = 1
                                 ORDER BY e.sequence LIMIT 1),
                               now())
                      FROM closing
                     WHERE a.id = closing.id
                    RETURNING a.id, a.sensor_id, a.cleared_at),
                %s
                INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at, alarm_id)
                SELECT done.sensor_id, moved.sequence, ?, moved.state, done.cleared_at, done.id
                  FROM done JOIN moved ON moved.sensor_id = done.sensor_id
                RETURNING id""".formatted(STEPS_STOPPED))) {
            ps.setInt(1, props.scanBatch());
            ps.setString(2, SensorEvent.STATE_CHANGED);
            ps.setString(3, SensorEvent.ALARM_CLEARED);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    events.add(rs.getLong(1));
                }
            }
        }
        // a sensor deleted, or deleted and registered again since: the new registration is another sensor, whose
        // sequence and clients the old alarm's clearing is none of
        try (PreparedStatement ps = c.prepareStatement("""
                WITH gone AS (
                    UPDATE alarms a SET cleared_at = now()
                     WHERE a.cleared_at IS NULL
                       AND (NOT EXISTS (SELECT 1 FROM sensor_state s WHERE s.sensor_id = a.sensor_id)
                            OR EXISTS (SELECT 1 FROM sensors r WHERE r.id = a.sensor_id AND r.created_at > a.recorded_at))
                    RETURNING a.id)
                UPDATE alarm_escalations e SET stopped_at = now() FROM gone
                 WHERE e.alarm_id = gone.id AND e.sent_at IS NULL AND e.stopped_at IS NULL""")) {
            ps.executeUpdate();
        }
        String trace = traces.scanRound("alarms: cleared", started, events.size());
        Outbox.notificationsFor(c, events, trace);
        // after those its filters took, which the unique (event, client) keeps from being given twice
        Outbox.notificationsTo(c, stepClientsOf(c, events, false), trace);
        return events.size();
    }

    /**
     * The clients told of these clearings' alarms, who hear the clearing whatever they filter, or the guard called
     * out would never learn that the door has closed: those sent a step (linked or not, and not cancelled before it
     * went), and the linked ones told of the raising that take clearings, though their severities changed since.
     * The others of those linked hear it as their filters say; one already given it is not given it twice.
     */
    private static List<Outbox.To> stepClientsOf(Connection c, List<Long> events, boolean sensorDeleted)
            throws SQLException {
        List<Outbox.To> to = new ArrayList<>();
        if (events.isEmpty()) {
            return to;
        }
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT ev.id, e.client_id
                  FROM sensor_events ev JOIN alarm_escalations e ON e.alarm_id = ev.alarm_id
                 WHERE ev.id = ANY (?) AND e.sent_at IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM notifications n
                                    WHERE n.event_id = e.event_id AND n.client_id = e.client_id AND n.status = 'cancelled')
                UNION
                SELECT ev.id, n.client_id
                  FROM sensor_events ev
                  JOIN alarms a ON a.id = ev.alarm_id
                  -- its raising, or the raising a maintenance window released later: by the sensor's sequence index
                  JOIN sensor_events r ON r.sensor_id = ev.sensor_id AND r.sequence >= a.raised_sequence
                                      AND r.sequence < ev.sequence AND r.alarm_id = ev.alarm_id AND r.type IN %s
                  JOIN notifications n ON n.event_id = r.id
                  JOIN clients cl ON cl.id = n.client_id
                 WHERE ev.id = ANY (?)
                   AND (cl.event_types IS NULL OR ev.type = ANY (cl.event_types))
                   -- a deleted sensor's links went with it: those its raising reached (not cancelled unsent by the
                   -- deletion) were linked then
                   AND (? AND n.status <> 'cancelled'
                        OR EXISTS (SELECT 1 FROM client_sensors cs WHERE cs.client_id = n.client_id AND cs.sensor_id = ev.sensor_id))"""
                .formatted(SensorEvent.ALARM_RAISINGS_SQL))) {
            Object[] ids = events.toArray();
            ps.setArray(1, c.createArrayOf("int8", ids));
            ps.setArray(2, c.createArrayOf("int8", ids));
            ps.setBoolean(3, sensorDeleted);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    to.add(new Outbox.To(rs.getLong(1), rs.getObject(2, java.util.UUID.class)));
                }
            }
        }
        return to;
    }

    /**
     * The clearing of an alarm closed because its sensor was deleted (V42's trigger records it), given to the clients
     * that were told of the alarm, as a clearing the scan records is: those sent a step (what of its steps the
     * deletion cancelled unsent was never heard), and those its raising reached. Nobody else: the sensor's links are
     * gone. In the deleting transaction, after its unsent notifications were cancelled.
     */
    public static void deletedSensorsClearingHeard(Connection c, long clearing, String traceParent) throws SQLException {
        Outbox.notificationsTo(c, stepClientsOf(c, List.of(clearing), true), traceParent);
    }

    /**
     * When {@code open-after} changed since the last start, the deadlines of the open doors that follow it (no
     * threshold of their own, no alarm yet for this opening) are computed again, once, by whichever instance
     * starts first.
     */
    public void reconcileDefault() {
        String value = props.openAfter() == null ? "off" : String.valueOf(props.openAfter().toSeconds());
        tx.executeWithoutResult(status -> {
            List<String> stored = jdbc.queryForList(
                    "SELECT value FROM service_settings WHERE name = 'alarms.default_open_seconds' FOR UPDATE", String.class);
            if (!stored.isEmpty() && stored.get(0).equals(value)) {
                return;
            }
            Integer seconds = props.openAfter() == null ? null : (int) props.openAfter().toSeconds();
            int updated = jdbc.update("""
                    UPDATE sensor_state st
                       SET alarm_due_at = st.state_changed_at + make_interval(secs => ?::integer)
                     WHERE st.open_alarm_seconds IS NULL AND st.state = 0
                       AND NOT EXISTS (SELECT 1 FROM alarms a
                                        WHERE a.sensor_id = st.sensor_id AND a.type = 'door_open_too_long' AND a.opened_at = st.state_changed_at)""",
                    seconds);
            jdbc.update("""
                    INSERT INTO service_settings (name, value) VALUES ('alarms.default_open_seconds', ?)
                    ON CONFLICT (name) DO UPDATE SET value = excluded.value""", value);
            if (!stored.isEmpty() || updated > 0) {
                log.info("Open-door alarm threshold is now {}: {} deadlines of open doors recomputed",
                        props.openAfter() == null ? "off" : value + " s", updated);
            }
        });
        // a battery threshold changed since: every battery is judged again by the next scans
        String battery = props.batteryLowPercent() + "+" + props.batteryLowHysteresis();
        tx.executeWithoutResult(status -> {
            List<String> stored = jdbc.queryForList(
                    "SELECT value FROM service_settings WHERE name = 'alarms.battery_low' FOR UPDATE", String.class);
            if (!stored.isEmpty() && stored.get(0).equals(battery)) {
                return;
            }
            // in the order of their ids, as ingest writes them
            int marked = jdbc.update("""
                    UPDATE sensor_health SET alarm_check = true
                     WHERE sensor_id IN (SELECT sensor_id FROM sensor_health WHERE battery IS NOT NULL AND NOT alarm_check
                                          ORDER BY sensor_id FOR UPDATE)""");
            jdbc.update("""
                    INSERT INTO service_settings (name, value) VALUES ('alarms.battery_low', ?)
                    ON CONFLICT (name) DO UPDATE SET value = excluded.value""", battery);
            if (marked > 0) {
                log.info("Battery-low alarm threshold is now {} %: {} batteries to be judged again", battery, marked);
            }
        });
    }

    /** Alarms raised and not cleared; sampled for the gauge (SampledGauges), which turns a failure into NaN. */
    long countActive() {
        Long n = jdbc.queryForObject("SELECT count(*) FROM alarms WHERE cleared_at IS NULL", Long.class);
        return n == null ? 0 : n;
    }
}
