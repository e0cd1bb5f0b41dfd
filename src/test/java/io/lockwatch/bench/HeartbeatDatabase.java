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

    /** Every connectivity event (lost and restored), in id order. */
    void forEachConnectivityEvent(EventRow row) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(EVENTS + " WHERE type IN (?, ?) ORDER BY id")) {
                ps.setFetchSize(10_000);
                ps.setString(1, LOST);
                ps.setString(2, RESTORED);
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

    /** The heartbeat scan's trigger as stored in Quartz's job store, or null if there is none (yet). */
    ScanSchedule scanSchedule() throws SQLException {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("""
                SELECT t.next_fire_time, s.repeat_interval
                  FROM qrtz_triggers t
                  JOIN qrtz_simple_triggers s USING (sched_name, trigger_name, trigger_group)
                 WHERE t.trigger_name = ? AND t.trigger_group = ?""")) {
            ps.setString(1, "heartbeat-scan");
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

        LostEventFollower() throws SQLException {
            connection = connect();
            try (var s = connection.createStatement()) {
                // a generic plan for "id > $1" would guess a third of the table and scan it all, every poll
                s.execute("SET plan_cache_mode = force_custom_plan");
            }
            try (PreparedStatement ps = connection.prepareStatement("""
                    SELECT (SELECT min(id) - 1 FROM sensor_events WHERE type = ?),
                           (SELECT coalesce(max(id), 0) FROM sensor_events)""")) {
                ps.setString(1, LOST);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    long beforeFirstLost = rs.getLong(1);
                    after = rs.wasNull() ? rs.getLong(2) : beforeFirstLost;
                }
            }
            poll = connection.prepareStatement(EVENTS + " WHERE type = ? AND id > ? ORDER BY id");
            poll.setString(1, LOST);
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
