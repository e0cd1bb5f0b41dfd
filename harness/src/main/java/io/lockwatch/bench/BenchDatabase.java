package io.lockwatch.bench;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The benchmark's use of PostgreSQL, as the service's own user, in plain JDBC. */
final class BenchDatabase {

    /** One row of {@code sensor_state}. */
    interface StateRow {
        void accept(String sensorId, Integer state, long sequence);
    }

    /**
     * The benchmark's sensors, whose state and events are checked against the reference; the two-instances drill's
     * silent sensors ({@link #SILENT_PREFIX}) are checked on their own.
     */
    static final String SENSORS_LIKE = Reference.PREFIX + "%";
    static final String SILENT_PREFIX = "Q";

    private final String url;
    private final String user;
    private final String password;

    BenchDatabase(String url, String user, String password) {
        this.url = url;
        this.user = user;
        this.password = password;
    }

    private Connection connect() throws SQLException {
        return DriverManager.getConnection(url, user, password);
    }

    /**
     * Wipes the registry (sensors and clients), state, events and notifications, then registers {@code n} sensors with one set-based insert; the
     * trigger {@code sensors_have_state} gives each its {@code sensor_state} row.
     *
     * @return the number of {@code sensor_state} rows afterwards
     */
    long registerSensors(int n) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            for (int attempt = 1; ; attempt++) {
                try (Statement s = c.createStatement()) {
                    // the running service's notification claim locks notifications, then clients and sensors, the
                    // other order from the cascade's: taking notifications first waits for a claim instead of
                    // deadlocking with it (a service with last run's outbox to claim did so five times in a row)
                    s.execute("LOCK TABLE notifications IN ACCESS EXCLUSIVE MODE");
                    // sensor_events and alarms have no foreign key to sensors (they outlive their sensor): truncated
                    // by name, or a run's alarms would be the next run's, on sensors of the same ids
                    s.execute("TRUNCATE sensors, clients, sensor_events, alarms CASCADE");
                    break;
                } catch (SQLException e) {
                    // another of the service's statements may still take these tables in another order
                    c.rollback();
                    if (!"40P01".equals(e.getSQLState()) || attempt == 5) {
                        throw e;
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO sensors (id, address)
                    SELECT ? || lpad(to_hex(i), 10, '0'), 'Bench street ' || i || ', door ' || (i % 7 + 1)
                      FROM generate_series(1, ?) AS i""")) {
                ps.setString(1, Reference.PREFIX);
                ps.setInt(2, n);
                ps.executeUpdate();
            }
            c.commit();
            try (Statement s = c.createStatement()) {
                // fresh planner statistics, as autovacuum would have them on a table of this size
                s.execute("ANALYZE sensors, sensor_state");
            }
            c.commit();
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT count(*) FROM sensor_state")) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * Names each sensor's device, a LoRaWAN one of this profile, its DevEUI its id's hex digits
     * ({@link LoRaWanPublisher#devEui}).
     */
    void nameDevices(String profile) throws SQLException {
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement(
                "UPDATE sensors SET profile = ?, device_id = '000000' || lower(substr(id, 2)) WHERE id LIKE ?")) {
            ps.setString(1, profile);
            ps.setString(2, Reference.PREFIX + "%");
            ps.executeUpdate();
        }
    }

    /**
     * Registers the benchmark's clients (id, name, URL and webhook secret as given; their index is their
     * position) and links client {@code c} to the sensors {@code (c * perClient + j) mod sensors}, {@code j <
     * perClient}, as {@link Links} computes them, with one set-based insert.
     */
    void registerClientsAndLinks(List<String> ids, List<String> urls, List<String> secrets, int perClient,
                                 int sensors, int maxEventsPerRequest) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(
                    "INSERT INTO clients (id, name, url, webhook_secret, max_events_per_request) VALUES (?::uuid, ?, ?, ?, ?)")) {
                for (int i = 0; i < ids.size(); i++) {
                    ps.setString(1, ids.get(i));
                    ps.setString(2, "Bench client " + i);
                    ps.setString(3, urls.get(i));
                    ps.setString(4, secrets.get(i));
                    ps.setInt(5, maxEventsPerRequest);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO client_sensors (client_id, sensor_id)
                    SELECT cl.id::uuid, ? || lpad(to_hex(((cl.n * ?::bigint + j) % ?) + 1), 10, '0')
                      FROM (SELECT id, ord - 1 AS n FROM unnest(?::text[]) WITH ORDINALITY AS u (id, ord)) AS cl
                     CROSS JOIN generate_series(0, ? - 1) AS j
                    ON CONFLICT DO NOTHING""")) {
                ps.setString(1, Reference.PREFIX);
                ps.setInt(2, perClient);
                ps.setInt(3, sensors);
                ps.setArray(4, c.createArrayOf("text", ids.toArray()));
                ps.setInt(5, perClient);
                ps.executeUpdate();
            }
            c.commit();
            try (Statement s = c.createStatement()) {
                s.execute("ANALYZE clients, client_sensors");
            }
            c.commit();
        }
    }

    /** Notifications by status. */
    Map<String, Long> notificationsByStatus() throws SQLException {
        return counts("SELECT status, count(*) FROM notifications GROUP BY status");
    }

    /** Superseded notifications by reason ({@code unknown} for none recorded). */
    Map<String, Long> supersededByReason() throws SQLException {
        return counts("""
                SELECT coalesce(superseded_reason, 'unknown'), count(*) FROM notifications
                 WHERE status = 'superseded' GROUP BY 1""");
    }

    /** Superseded notifications by client id. */
    Map<String, Long> supersededByClient() throws SQLException {
        return counts("SELECT client_id::text, count(*) FROM notifications WHERE status = 'superseded' GROUP BY 1");
    }

    /**
     * Where a notification's time went, by the service's own timestamps, for the first attempts of the events that
     * occurred in [from, to): from the reading to the start of the ingest transaction that recorded it (the
     * notification's {@code created_at}, the transaction's {@code now()}; the broker and the batch wait), from
     * there to the attempt's start (the transaction, its commit, the claim, a poster), and the POST itself. Each as
     * p50, p99 and max in ms.
     *
     * @param leftOut names of clients left out (a drill's misbehaving one)
     */
    record Stages(long count, double[] toBatch, double[] toPost, double[] post) {
    }

    Stages stages(long fromMs, long toMs, List<String> leftOut) throws SQLException {
        try (Connection c = connect(); PreparedStatement ps = firstAttempts(c, """
                SELECT count(*),
                       percentile_cont(ARRAY[0.5, 0.99, 1]) WITHIN GROUP (ORDER BY created - occurred),
                       percentile_cont(ARRAY[0.5, 0.99, 1]) WITHIN GROUP (ORDER BY attempted - created),
                       percentile_cont(ARRAY[0.5, 0.99, 1]) WITHIN GROUP (ORDER BY post)
                  FROM firsts""", fromMs, toMs, leftOut); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return new Stages(rs.getLong(1), doubles(rs, 2), doubles(rs, 3), doubles(rs, 4));
        }
    }

    /**
     * The slowest 1% (at least one) of the same first attempts as {@link #stages}, by the time from their event to
     * their POST's answer, each with the service's timestamps of its way.
     */
    List<SlowestNotifications.Way> slowest(long fromMs, long toMs, List<String> leftOut) throws SQLException {
        try (Connection c = connect(); PreparedStatement ps = firstAttempts(c, """
                SELECT occurred, created, attempted, post FROM firsts
                 ORDER BY attempted + post - occurred DESC
                 LIMIT greatest(1, (SELECT count(*) FROM firsts) / 100)""", fromMs, toMs, leftOut);
             ResultSet rs = ps.executeQuery()) {
            List<SlowestNotifications.Way> ways = new java.util.ArrayList<>();
            while (rs.next()) {
                ways.add(new SlowestNotifications.Way(rs.getDouble(1), rs.getDouble(2), rs.getDouble(3), rs.getDouble(4)));
            }
            return ways;
        }
    }

    /**
     * {@code query} over {@code firsts}: the first attempts of the events that occurred in [from, to), of the clients
     * not left out, each with its event's time, its transaction's ({@code created_at}), its attempt's start (epoch ms)
     * and its POST's length (ms).
     */
    private static PreparedStatement firstAttempts(Connection c, String query, long fromMs, long toMs, List<String> leftOut)
            throws SQLException {
        PreparedStatement ps = c.prepareStatement("""
                WITH firsts AS (
                  SELECT extract(epoch FROM e.occurred_at) * 1000 AS occurred,
                         extract(epoch FROM n.created_at) * 1000 AS created,
                         extract(epoch FROM a.attempted_at) * 1000 AS attempted,
                         a.duration_ms AS post
                    FROM notifications n
                    JOIN sensor_events e ON e.id = n.event_id
                    JOIN delivery_attempts a ON a.notification_id = n.id AND a.attempt = 1
                    JOIN clients cl ON cl.id = n.client_id
                   WHERE e.occurred_at >= to_timestamp(? / 1000.0) AND e.occurred_at < to_timestamp(? / 1000.0)
                     AND cl.name <> ALL (?))
                """ + query);
        ps.setLong(1, fromMs);
        ps.setLong(2, toMs);
        ps.setArray(3, c.createArrayOf("text", leftOut.toArray()));
        return ps;
    }

    private static double[] doubles(ResultSet rs, int column) throws SQLException {
        java.sql.Array a = rs.getArray(column);
        if (a == null) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN};
        }
        Object[] values = (Object[]) a.getArray();
        double[] out = new double[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = ((Number) values[i]).doubleValue();
        }
        return out;
    }

    /** A fixed query's (key, count) rows. */
    private Map<String, Long> counts(String sql) throws SQLException {
        Map<String, Long> out = new TreeMap<>();
        try (Connection c = connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getLong(2));
            }
        }
        return out;
    }

    void forEachState(StateRow row) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(
                    "SELECT sensor_id, state, sequence FROM sensor_state WHERE sensor_id LIKE ?")) {
                ps.setFetchSize(10_000);
                ps.setString(1, SENSORS_LIKE);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        short state = rs.getShort(2);
                        row.accept(rs.getString(1), rs.wasNull() ? null : (int) state, rs.getLong(3));
                    }
                }
            }
            c.commit();
        }
    }

    /** Events of the benchmark's sensors. */
    long countEvents() throws SQLException {
        try (Connection c = connect();
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM sensor_events WHERE sensor_id LIKE ?")) {
            ps.setString(1, SENSORS_LIKE);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    /**
     * Registers {@code n} sensors {@code 'Q' || lpad(i, 10, '0')} with their own heartbeat timeout, linked to no
     * client; returns their ids.
     */
    List<String> registerSilentSensors(int n, int timeoutSeconds) throws SQLException {
        List<String> ids = new java.util.ArrayList<>();
        try (Connection c = connect(); PreparedStatement ps = c.prepareStatement("""
                INSERT INTO sensors (id, address, heartbeat_timeout_seconds)
                SELECT ? || lpad(i::text, 10, '0'), 'Silent street ' || i, ?
                  FROM generate_series(1, ?) AS i
                RETURNING id""")) {
            ps.setString(1, SILENT_PREFIX);
            ps.setInt(2, timeoutSeconds);
            ps.setInt(3, n);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getString(1));
                }
            }
        }
        return ids;
    }

    /** What the database's sessions are doing now, as text (for --diagnostics). */
    String activity() throws SQLException {
        StringBuilder out = new StringBuilder();
        try (Connection c = connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("""
                     SELECT pid, coalesce(application_name, ''), coalesce(state, ''),
                            coalesce(wait_event_type || '/' || wait_event, ''),
                            coalesce(round(extract(epoch FROM clock_timestamp() - query_start) * 1000)::text, ''),
                            left(regexp_replace(coalesce(query, ''), '\\s+', ' ', 'g'), 90)
                       FROM pg_stat_activity
                      WHERE datname = current_database() AND pid <> pg_backend_pid()
                      ORDER BY state, pid""")) {
            out.append(String.format("%-8s %-24s %-20s %-26s %8s  %s%n", "pid", "application", "state", "wait", "ms", "query"));
            while (rs.next()) {
                out.append(String.format("%-8s %-24s %-20s %-26s %8s  %s%n", rs.getString(1), rs.getString(2),
                        rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6)));
            }
        }
        return out.toString();
    }
}
