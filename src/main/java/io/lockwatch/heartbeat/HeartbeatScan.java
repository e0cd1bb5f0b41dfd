package io.lockwatch.heartbeat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

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
 * Declares lost the sensors that have been silent past their deadline, set-based. The deadline changes with every
 * reading, so it is deliberately not indexed (migration V9): one read of the table finds the due sensors (oldest
 * deadline first, up to {@value #LISTED_BATCHES} transactions' worth), then each transaction takes up to
 * {@code scanBatch} of them by id, checks again that each is still online and due ({@code SKIP LOCKED} so it never
 * waits for ingest; a reading applied meanwhile has moved its deadline), marks them lost and records one
 * {@code sensor.connection_lost} event each (at the deadline) in one statement, then their notifications. Run by a
 * clustered Quartz trigger, so one instance scans at a time; were two to run, each silence is still declared once.
 *
 * <p>Readings still waiting in the broker must count before a silence is declared: while the readings queue
 * holds more than {@code maxBacklog} messages (after a restart, or a database outage) the scan waits for ingest
 * to catch up. The readings carry their own measured time, so a sensor that reported during a downtime has a
 * deadline beyond now once its backlog is applied, and is not declared lost.
 */
public class HeartbeatScan {

    private static final Logger log = LoggerFactory.getLogger(HeartbeatScan.class);
    /** Due sensors listed per read of the table, in transactions of {@code scanBatch}. */
    static final int LISTED_BATCHES = 10;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final ReadingsBacklog backlog;
    private final HeartbeatProperties props;
    private final Counter lost;
    private final Counter deferred;
    private final Traces traces;
    /** The profiles' heartbeat timeouts in seconds, of those that set one. */
    private final java.util.Map<String, Integer> profileTimeouts;
    /** Whether this instance's start has reconciled the timeouts (else each scan tries). */
    private volatile boolean timeoutsReconciled;

    public HeartbeatScan(JdbcTemplate jdbc, TransactionTemplate tx, ReadingsBacklog backlog, HeartbeatProperties props,
                         MeterRegistry meters, Traces traces, java.util.Map<String, Integer> profileTimeouts) {
        this.traces = traces;
        this.profileTimeouts = java.util.Map.copyOf(profileTimeouts);
        this.jdbc = jdbc;
        this.tx = tx;
        this.backlog = backlog;
        this.props = props;
        this.lost = meters.counter("lockwatch.sensors.lost");
        this.deferred = meters.counter("lockwatch.heartbeat.scans.deferred");
    }

    /** @return the number of sensors declared lost by this scan; new notifications are then due */
    public int scan() {
        if (!timeoutsReconciled) {
            reconcileTimeouts();
        }
        Long queued = backlog.messages();
        if (queued != null && queued > props.maxBacklog()) {
            deferred.increment();
            log.info("Heartbeat scan deferred: {} readings still queued",
                    queued == Long.MAX_VALUE ? "an unknown number of" : queued);
            return 0;
        }
        int total = 0;
        int listed, declared;
        do {
            List<String> due = jdbc.queryForList("""
                    SELECT sensor_id
                      FROM sensor_state
                     WHERE connectivity = 'online' AND lost_deadline < now()
                     ORDER BY lost_deadline
                     LIMIT ?""", String.class, (long) props.scanBatch() * LISTED_BATCHES);
            listed = due.size();
            declared = 0;
            for (int from = 0; from < due.size(); from += props.scanBatch()) {
                List<String> batch = due.subList(from, Math.min(due.size(), from + props.scanBatch()));
                declared += tx.execute(status -> jdbc.execute((Connection c) -> declareLost(c, batch)));
            }
            total += declared;
            // a full list may have more behind it; a list of which nothing was declared (all taken meanwhile) leaves
            // the rest to the next scan
        } while (listed == (long) props.scanBatch() * LISTED_BATCHES && declared > 0);
        if (total > 0) {
            lost.increment(total);
            log.info("{} sensors declared lost", total);
        }
        return total;
    }

    /**
     * One batch in one statement: those of the listed sensors that are still online and due are marked lost and
     * their events recorded in the database itself (the event occurs at the deadline); then their notifications.
     */
    private int declareLost(Connection c, List<String> sensorIds) throws SQLException {
        long started = System.currentTimeMillis();
        List<Long> eventIds = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                WITH due AS (
                    SELECT sensor_id
                      FROM sensor_state
                     WHERE sensor_id = ANY (?) AND connectivity = 'online' AND lost_deadline < now()
                     ORDER BY sensor_id
                       FOR UPDATE SKIP LOCKED),
                lost AS (
                    UPDATE sensor_state s
                       SET connectivity = 'lost', lost_at = now(), sequence = s.sequence + 1
                      FROM due
                     WHERE s.sensor_id = due.sensor_id
                    RETURNING s.sensor_id, s.sequence, s.state, s.lost_deadline)
                INSERT INTO sensor_events (sensor_id, sequence, type, state, occurred_at)
                SELECT sensor_id, sequence, ?, state, lost_deadline FROM lost
                RETURNING id""")) {
            ps.setArray(1, c.createArrayOf("varchar", sensorIds.toArray()));
            ps.setString(2, SensorEvent.CONNECTION_LOST);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    eventIds.add(rs.getLong(1));
                }
            }
        }
        Outbox.notificationsFor(c, eventIds, traces.scanRound("heartbeat: sensors lost", started, eventIds.size()));
        return eventIds.size();
    }

    /**
     * At the start: when the profiles' timeouts or the default one changed since the last start, the deadlines
     * computed with the old ones are recomputed, once, by whichever instance starts first. A registry import under
     * way may hold that off (below): the heartbeat's next scan tries again, and the start goes on.
     */
    public void reconcileTimeouts() {
        try {
            tx.executeWithoutResult(status -> {
                // one instance at a time, without holding up a registration (its trigger's ROW SHARE, V51)
                jdbc.execute("LOCK TABLE profile_heartbeat_timeouts IN SHARE ROW EXCLUSIVE MODE");
                if (!profileTimeoutsAsConfigured()) {
                    // a sensor registered or given a profile meanwhile has its copy of the timeout written either
                    // before (the updates below see it) or after, reading the reconciled timeout: EXCLUSIVE waits for
                    // the ROW SHARE of its trigger; a long import's holds it for minutes, so not for long
                    jdbc.queryForObject("SELECT set_config('lock_timeout', '5s', true)", String.class);
                    jdbc.execute("LOCK TABLE profile_heartbeat_timeouts IN EXCLUSIVE MODE");
                    reconcileProfileTimeouts();
                }
                reconcileDefaultTimeout();
            });
            timeoutsReconciled = true;
        } catch (org.springframework.dao.DataAccessException e) {
            if (!lockNotAvailable(e)) {
                throw e;
            }
            log.warn("The device profiles' heartbeat timeouts are not reconciled yet: a registration (a registry "
                    + "import?) holds their table; tried again at the next heartbeat scan");
        }
    }

    /** PostgreSQL's lock_not_available (55P03): the lock timeout ran out. */
    private static boolean lockNotAvailable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.sql.SQLException sql && "55P03".equals(sql.getSQLState())) {
                return true;
            }
        }
        return false;
    }

    /** Whether the stored profiles' timeouts are the configured ones. */
    private boolean profileTimeoutsAsConfigured() {
        java.util.Map<String, Integer> stored = new java.util.HashMap<>();
        jdbc.query("SELECT profile, heartbeat_timeout_seconds FROM profile_heartbeat_timeouts",
                (org.springframework.jdbc.core.RowCallbackHandler) rs -> stored.put(rs.getString(1), rs.getInt(2)));
        return stored.equals(profileTimeouts);
    }

    /**
     * A profile's timeout, configured ({@code lockwatch.profiles.<name>.heartbeat-timeout}), is kept in
     * {@code profile_heartbeat_timeouts} (V49), and copied into the state of each of its sensors that has no timeout
     * of its own, whose deadline follows it at once.
     */
    private void reconcileProfileTimeouts() {
        java.util.Map<String, Integer> stored = new java.util.HashMap<>();
        jdbc.query("SELECT profile, heartbeat_timeout_seconds FROM profile_heartbeat_timeouts",
                (org.springframework.jdbc.core.RowCallbackHandler) rs -> stored.put(rs.getString(1), rs.getInt(2)));
        java.util.Set<String> names = new java.util.TreeSet<>(stored.keySet());
        names.addAll(profileTimeouts.keySet());
        for (String profile : names) {
            Integer seconds = profileTimeouts.get(profile);
            if (java.util.Objects.equals(seconds, stored.get(profile))) {
                continue;
            }
            if (seconds == null) {
                jdbc.update("DELETE FROM profile_heartbeat_timeouts WHERE profile = ?", profile);
            } else {
                jdbc.update("""
                        INSERT INTO profile_heartbeat_timeouts (profile, heartbeat_timeout_seconds) VALUES (?, ?)
                        ON CONFLICT (profile) DO UPDATE SET heartbeat_timeout_seconds = excluded.heartbeat_timeout_seconds""",
                        profile, seconds);
            }
            int updated = jdbc.update("""
                    UPDATE sensor_state st
                       SET heartbeat_timeout_seconds = ?::integer,
                           lost_deadline = CASE WHEN st.last_seen_at IS NULL THEN st.lost_deadline
                               ELSE st.last_seen_at + make_interval(secs => coalesce(?::integer, ?) + ?) END
                      FROM sensors s
                     WHERE s.id = st.sensor_id AND s.profile = ? AND s.heartbeat_timeout_seconds IS NULL""",
                    seconds, seconds, props.timeout().toSeconds(),
                    io.lockwatch.ingest.LastSeenTolerance.MAX_MILLIS / 1000.0, profile);
            log.info("Profile {}: its sensors' heartbeat timeout is now {}: {} deadlines recomputed", profile,
                    seconds == null ? "the default" : seconds + " s", updated);
        }
    }

    private void reconcileDefaultTimeout() {
        long seconds = props.timeout().toSeconds();
        List<String> stored = jdbc.queryForList(
                "SELECT value FROM service_settings WHERE name = 'heartbeat.default_timeout_seconds' FOR UPDATE", String.class);
        if (!stored.isEmpty() && stored.get(0).equals(String.valueOf(seconds))) {
            return;
        }
        // the sensors with no timeout of their own and none of their profile's (their copy in sensor_state is null)
        int updated = jdbc.update("""
                UPDATE sensor_state st
                   SET lost_deadline = st.last_seen_at + make_interval(secs => ?)
                 WHERE st.heartbeat_timeout_seconds IS NULL AND st.last_seen_at IS NOT NULL""",
                // the stored last-seen time may lag by up to the tolerance of the old timeout: the largest is added
                (props.timeout().toMillis() + io.lockwatch.ingest.LastSeenTolerance.MAX_MILLIS) / 1000.0);
        jdbc.update("""
                INSERT INTO service_settings (name, value) VALUES ('heartbeat.default_timeout_seconds', ?)
                ON CONFLICT (name) DO UPDATE SET value = excluded.value""", String.valueOf(seconds));
        if (!stored.isEmpty()) {
            log.info("Default heartbeat timeout is now {} s: {} deadlines recomputed", seconds, updated);
        }
    }

    /** Sensors lost now; sampled for the gauge (SampledGauges), which turns a failure into NaN. */
    long countLost() {
        Long n = jdbc.queryForObject("SELECT count(*) FROM sensor_state WHERE connectivity = 'lost'", Long.class);
        return n == null ? 0 : n;
    }
}
