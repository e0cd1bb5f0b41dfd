package io.lockwatch.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

import io.lockwatch.infra.clickhouse.ClickHouse;
import io.lockwatch.infra.clickhouse.ClickHouseSettings;

/**
 * The history benchmark's use of ClickHouse, through the service's own connection class (the legacy JDBC
 * driver over HTTP): its database wiped and recreated, counts, parts, the record of a finished fill, and what
 * ClickHouse itself logged about the benchmark's queries.
 */
final class BenchClickHouse {

    private static final Pattern IDENTIFIER = Pattern.compile("[a-z_][a-z0-9_]*");
    private static final Duration TIMEOUT = Duration.ofMinutes(5);

    /** What a fill was made of: a table holding the same can be reused. */
    record Fill(long rows, int sensors, int days, long seed, int eventsPerSensor, long windowEnd) {
    }

    /** ClickHouse's own figures for a set of logged queries. */
    record Logged(int queries, List<Double> durationsMs, double meanReadRows, long maxReadRows, double meanReadBytes) {
    }

    private final String baseUrl;
    private final String database;
    private final ClickHouse server;
    private final ClickHouse db;

    BenchClickHouse(String baseUrl, String database) {
        if (!IDENTIFIER.matcher(database).matches()) {
            throw new IllegalArgumentException("not a plain database name: " + database);
        }
        this.baseUrl = baseUrl;
        this.database = database;
        this.server = connect(baseUrl);
        this.db = connect(baseUrl + "/" + database);
    }

    static ClickHouse connect(String url) {
        return new ClickHouse(new ClickHouseSettings(url, "default", "", TIMEOUT, 2));
    }

    /**
     * A connection to the database in a session of its own in which ClickHouse logs every query to
     * {@code system.query_log} (the legacy driver passes no {@code log_queries} setting, but keeps a session).
     */
    ClickHouse loggedSession() throws SQLException {
        ClickHouse session = connect(baseUrl + "/" + database + "?session_id=lockwatch-histbench-" + System.nanoTime()
                + "&session_timeout=3600");
        try (Connection c = session.connection(); Statement st = c.createStatement()) {
            st.execute("SET log_queries = 1");
        }
        return session;
    }

    /** Drops the database with every table in it, and creates it empty. */
    void recreate() throws SQLException {
        try (Connection c = server.connection(); Statement st = c.createStatement()) {
            // a database name cannot be a parameter; it is checked to be a plain identifier above
            st.execute("DROP DATABASE IF EXISTS `" + database + "`");
            st.execute("CREATE DATABASE `" + database + "`");
        }
    }

    void drop() throws SQLException {
        try (Connection c = server.connection(); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS `" + database + "`");
        }
    }

    /** Rows of a table of the database, all written (duplicates included) or as the store reads them (FINAL). */
    long count(String table, boolean deduplicated) throws SQLException {
        checkIdentifier(table);
        return single("SELECT count() FROM " + table + (deduplicated ? " FINAL" : ""));
    }

    long distinctSensors() throws SQLException {
        return single("SELECT uniqExact(sensor_id) FROM readings");
    }

    /** Rows in the active parts of a table (ClickHouse's own count, before merges collapse duplicates), the
     *  number of active parts, and of partitions. */
    long[] parts(String table) throws SQLException {
        try (Connection c = server.connection();
             PreparedStatement ps = c.prepareStatement("""
                     SELECT sum(rows), count(), uniqExact(partition) FROM system.parts
                      WHERE database = ? AND table = ? AND active""")) {
            ps.setString(1, database);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
            }
        }
    }

    /** The CREATE statement of a table, as ClickHouse reports it. */
    String createStatement(String table) throws SQLException {
        checkIdentifier(table);
        try (Connection c = db.connection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SHOW CREATE TABLE " + table)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** Records a finished fill (the database is recreated before every fill, so there is at most one). */
    void recordFill(Fill fill) throws SQLException {
        try (Connection c = db.connection(); Statement st = c.createStatement()) {
            st.execute("""
                    CREATE TABLE IF NOT EXISTS bench_history_fill (
                        rows              UInt64,
                        sensors           UInt32,
                        days              UInt32,
                        seed              Int64,
                        events_per_sensor UInt32,
                        window_end_ms     Int64,
                        filled_at         DateTime DEFAULT now()
                    ) ENGINE = MergeTree() ORDER BY filled_at""");
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO bench_history_fill (rows, sensors, days, seed, events_per_sensor, window_end_ms)
                    VALUES (?, ?, ?, ?, ?, ?)""")) {
                ps.setLong(1, fill.rows());
                ps.setInt(2, fill.sensors());
                ps.setInt(3, fill.days());
                ps.setLong(4, fill.seed());
                ps.setInt(5, fill.eventsPerSensor());
                ps.setLong(6, fill.windowEnd());
                ps.executeUpdate();
            }
        }
    }

    /** The recorded fill, or null if there is none (no database, no table, or an unfinished fill). */
    Fill recordedFill() throws SQLException {
        try (Connection c = server.connection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT count() FROM system.tables WHERE database = ? AND name = 'bench_history_fill'")) {
            ps.setString(1, database);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getLong(1) == 0) {
                    return null;
                }
            }
        }
        try (Connection c = db.connection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("""
                     SELECT rows, sensors, days, seed, events_per_sensor, window_end_ms
                       FROM bench_history_fill ORDER BY filled_at DESC LIMIT 1""")) {
            return rs.next()
                    ? new Fill(rs.getLong(1), rs.getInt(2), rs.getInt(3), rs.getLong(4), rs.getInt(5), rs.getLong(6))
                    : null;
        }
    }

    /** The server's clock, in seconds: query_log's event times are in its seconds. */
    long now() throws SQLException {
        return single("SELECT toUInt32(now())");
    }

    /**
     * What ClickHouse logged about the finished queries of this database's tables that started in
     * [fromSecond, toSecond] and whose text contains {@code marker} (logged only in a {@link #loggedSession()}).
     */
    Logged logged(String marker, long fromSecond, long toSecond) throws SQLException {
        try (Connection c = server.connection(); Statement st = c.createStatement()) {
            st.execute("SYSTEM FLUSH LOGS");
        }
        try (Connection c = server.connection();
             PreparedStatement ps = c.prepareStatement("""
                     SELECT query_duration_ms, read_rows, read_bytes FROM system.query_log
                      WHERE type = 2 AND event_date >= toDate(toDateTime(?))
                        AND query_start_time >= toDateTime(?) AND query_start_time <= toDateTime(?)
                        AND position(query, ?) > 0 AND position(query, 'system.query_log') = 0""")) {
            ps.setLong(1, fromSecond);
            ps.setLong(2, fromSecond);
            ps.setLong(3, toSecond);
            ps.setString(4, marker);
            List<Double> durations = new ArrayList<>();
            long readRows = 0, maxReadRows = 0, readBytes = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    durations.add((double) rs.getLong(1));
                    readRows += rs.getLong(2);
                    maxReadRows = Math.max(maxReadRows, rs.getLong(2));
                    readBytes += rs.getLong(3);
                }
            }
            int n = durations.size();
            return new Logged(n, durations, n == 0 ? Double.NaN : (double) readRows / n, maxReadRows,
                    n == 0 ? Double.NaN : (double) readBytes / n);
        }
    }

    private long single(String sql) throws SQLException {
        try (Connection c = db.connection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void checkIdentifier(String name) {
        if (!IDENTIFIER.matcher(name).matches()) {
            throw new IllegalArgumentException("not a plain table name: " + name);
        }
    }
}
