package io.lockwatch.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * What the heartbeat benchmark reads and writes in PostgreSQL beyond {@link BenchDatabase}, as the service's
 * own user, in plain JDBC.
 */
final class HeartbeatDatabase {

    static final String LOST = "sensor.connection_lost";
    static final String RESTORED = "sensor.connection_restored";
    static final String ALARM_RAISED = "sensor.alarm_raised";
    static final String ALARM_CLEARED = "sensor.alarm_cleared";

    /** A connectivity event as recorded: {@code occurred_at} and {@code recorded_at} in epoch milliseconds. */
    record Event(long id, String sensorId, String type, long occurredAt, long recordedAt) {
    }

    interface EventRow {
        void accept(Event event);
    }

    interface ConnectivityRow {
        void accept(String sensorId, String connectivity);
    }

    private final String url;
    private final String user;
    private final String password;

    HeartbeatDatabase(String url, String user, String password) {
        this.url = url;
        this.user = user;
        this.password = password;
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(url, user, password);
    }

    /**
     * Gives these sensors their own heartbeat timeout, as registering them with one would (before any reading,
     * so there is no deadline to recompute).
     */
    int setTimeout(List<String> sensorIds, int seconds) throws SQLException {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("""
                UPDATE sensors SET heartbeat_timeout_seconds = ?, updated_at = now() WHERE id = ANY (?)""")) {
            ps.setInt(1, seconds);
            ps.setArray(2, c.createArrayOf("varchar", sensorIds.toArray()));
            return ps.executeUpdate();
        }
    }

    /** Gives these sensors their own open-door alarm threshold, as registering them with one would. */
    int setOpenAlarm(List<String> sensorIds, int seconds) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            int n;
            try (PreparedStatement ps = c.prepareStatement("""
                    UPDATE sensors SET open_alarm_seconds = ?, updated_at = now() WHERE id = ANY (?)""");
                 PreparedStatement copy = c.prepareStatement("""
                    UPDATE sensor_state SET open_alarm_seconds = ? WHERE sensor_id = ANY (?)""")) {
                ps.setInt(1, seconds);
                ps.setArray(2, c.createArrayOf("varchar", sensorIds.toArray()));
                n = ps.executeUpdate();
                copy.setInt(1, seconds);
                copy.setArray(2, c.createArrayOf("varchar", sensorIds.toArray()));
                copy.executeUpdate();
            }
            c.commit();
            return n;
        }
    }

    /** How many of these sensors are in this state (0 open, 1 closed) now. */
    long countState(List<String> sensorIds, int state) throws SQLException {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(
                "SELECT count(*) FROM sensor_state WHERE sensor_id = ANY (?) AND state = ?")) {
            ps.setArray(1, c.createArrayOf("varchar", sensorIds.toArray()));
            ps.setInt(2, state);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Alarms not cleared. */
    long countActiveAlarms() throws SQLException {
        try (Connection c = connect();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM alarms WHERE cleared_at IS NULL");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** How many of these sensors are online now. */
    long countOnline(List<String> sensorIds) throws SQLException {
        return countConnectivity(sensorIds, "online");
    }

    /** How many of these sensors have this connectivity now ('unknown', 'online' or 'lost'). */
    long countConnectivity(List<String> sensorIds, String connectivity) throws SQLException {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("""
                SELECT count(*) FROM sensor_state WHERE sensor_id = ANY (?) AND connectivity = ?""")) {
            ps.setArray(1, c.createArrayOf("varchar", sensorIds.toArray()));
            ps.setString(2, connectivity);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** Every event of these two types (lost and restored; raised and cleared), in id order. */
    void forEachEvent(String first, String again, boolean onlyInMaintenance, EventRow row) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(EVENTS + " WHERE type IN (?, ?)"
                    + (onlyInMaintenance ? " AND maintenance" : "") + " ORDER BY id")) {
                ps.setFetchSize(10_000);
                ps.setString(1, first);
                ps.setString(2, again);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        row.accept(event(rs));
                    }
                }
            }
            c.commit();
        }
    }

    /** The sensors that are not online, with their connectivity. */
    void forEachNotOnline(ConnectivityRow row) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT sensor_id, connectivity FROM sensor_state WHERE connectivity <> ?")) {
                ps.setFetchSize(10_000);
                ps.setString(1, "online");
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        row.accept(rs.getString(1), rs.getString(2));
                    }
                }
            }
            c.commit();
        }
    }

    long countEvents(String type) throws SQLException {
        try (Connection c = connect();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM sensor_events WHERE type = ?")) {
            ps.setString(1, type);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /** The heartbeat scan's clustered Quartz trigger: when it fires next, and how often (epoch ms, ms). */
    record ScanSchedule(long nextFire, long interval) {
    }

    /** A scan's trigger ("heartbeat-scan", "alarm-scan") as stored in Quartz's job store, or null if there is none (yet). */
    ScanSchedule scanSchedule(String trigger) throws SQLException {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("""
                SELECT t.next_fire_time, s.repeat_interval
                  FROM qrtz_triggers t
                  JOIN qrtz_simple_triggers s USING (sched_name, trigger_name, trigger_group)
                 WHERE t.trigger_name = ? AND t.trigger_group = ?""")) {
            ps.setString(1, trigger);
            ps.setString(2, "lockwatch");
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new ScanSchedule(rs.getLong(1), rs.getLong(2)) : null;
            }
        }
    }

    private static final String EVENTS = """
            SELECT id, sensor_id, type, (extract(epoch FROM occurred_at) * 1000)::bigint,
                   (extract(epoch FROM recorded_at) * 1000)::bigint
              FROM sensor_events""";

    private static Event event(ResultSet rs) throws SQLException {
        return new Event(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getLong(4), rs.getLong(5));
    }

    /**
     * Follows the lost events as they become visible to a reader, on a connection of its own: each poll returns
     * those with an id beyond the last lost one seen. The heartbeat scan records them one transaction at a time,
     * so their ids become visible in increasing order (ingest's events, committed concurrently, may not be, so the
     * position never moves past them); the final check reads them all again and counts any this missed. It starts
     * after the newest event recorded so far, or before the first lost one if there is one already, so that
     * a poll only reads the few events since.
     */
    final class LostEventFollower implements AutoCloseable {

        private final Connection connection;
        private final PreparedStatement poll;
        private long after;

        private final String type;

        /** @param type the events followed: lost ones, or raised alarms */
        LostEventFollower(String type) throws SQLException {
            this.type = type;
            connection = connect();
            try (var s = connection.createStatement()) {
                // a generic plan for "id > $1" would guess a third of the table and scan it all, every poll
                s.execute("SET plan_cache_mode = force_custom_plan");
            }
            try (PreparedStatement ps = connection.prepareStatement("""
                    SELECT (SELECT min(id) - 1 FROM sensor_events WHERE type = ?),
                           (SELECT coalesce(max(id), 0) FROM sensor_events)""")) {
                ps.setString(1, type);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    long beforeFirstLost = rs.getLong(1);
                    after = rs.wasNull() ? rs.getLong(2) : beforeFirstLost;
                }
            }
            poll = connection.prepareStatement(EVENTS + " WHERE type = ? AND id > ? ORDER BY id");
            poll.setString(1, type);
        }

        /** The lost events that became visible since the last poll. */
        List<Event> poll() throws SQLException {
            poll.setLong(2, after);
            List<Event> events = new ArrayList<>();
            try (ResultSet rs = poll.executeQuery()) {
                while (rs.next()) {
                    Event e = event(rs);
                    events.add(e);
                    after = Math.max(after, e.id());
                }
            }
            return events;
        }

        @Override
        public void close() throws SQLException {
            connection.close();
        }
    }
}
