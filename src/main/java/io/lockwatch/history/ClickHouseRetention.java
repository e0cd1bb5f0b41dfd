package io.lockwatch.history;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import io.lockwatch.infra.clickhouse.ClickHouse;
import io.lockwatch.retention.Retention;

/**
 * ClickHouse's history kept for the retention. Its tables are partitioned by month: a month wholly older than the
 * horizon is dropped, which is how ClickHouse removes data cheaply on every version, 18.16 included. A server that
 * has table TTLs (19.6 and later) is also given one per table, so that rows go on their own day rather than with
 * their month.
 *
 * <p>A table that is a {@code Distributed} one (history replicated and sharded, docker/clickhouse/replicated-schema.sql)
 * has no months of its own and takes no TTL: its local tables on every shard hold the data, and their TTL, set
 * with the schema, removes it. Such a table is left alone, and said so once.
 */
public final class ClickHouseRetention implements Retention.OldHistory {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ClickHouseRetention.class);
    /** Each table and the time column its month partitions and its TTL are of. */
    static final Map<String, String> TABLES = Map.of("readings", "measured_at", "events", "occurred_at",
            "delivery_attempts", "attempted_at");
    private static final Pattern MONTH = Pattern.compile("\\d{6}");
    private static final DateTimeFormatter YYYYMM = DateTimeFormatter.ofPattern("yyyyMM").withZone(ZoneOffset.UTC);

    private final ClickHouse clickHouse;
    private final long keptDays;
    private volatile Boolean ttlSet;
    private final java.util.Set<String> toldDistributed = java.util.concurrent.ConcurrentHashMap.newKeySet();

    public ClickHouseRetention(ClickHouse clickHouse, java.time.Duration kept) {
        this.clickHouse = clickHouse;
        this.keptDays = Math.max(1, kept.toDays());
    }

    @Override
    public void removeBefore(Instant horizon) {
        try (Connection c = clickHouse.connection(); Statement st = c.createStatement()) {
            List<String> own = ownTables(c);
            if (ttlSet == null) {
                ttlSet = setTtls(st, own);
            }
            String firstKept = YYYYMM.format(horizon);
            for (String table : own) {
                for (String month : monthsBefore(c, table, firstKept)) {
                    // a DDL statement takes no parameters: the month is six digits, read from system.parts
                    st.execute("ALTER TABLE " + table + " DROP PARTITION " + month);
                    log.info("Retention: ClickHouse {} of {} dropped (older than {} days)", table, month, keptDays);
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("ClickHouse retention failed: " + e.getMessage(), e);
        }
    }

    /** The history tables that hold their rows themselves (not Distributed), in name order. */
    List<String> ownTables(Connection c) throws SQLException {
        List<String> own = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT name, engine FROM system.tables WHERE database = currentDatabase()""")) {
            Map<String, String> engines = new java.util.HashMap<>();
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    engines.put(rs.getString(1), rs.getString(2));
                }
            }
            for (String table : TABLES.keySet().stream().sorted().toList()) {
                if (!"Distributed".equals(engines.get(table))) {
                    own.add(table);
                } else if (toldDistributed.add(table)) {
                    log.warn("Retention: ClickHouse table {} is Distributed: its rows are removed by its local tables' TTL "
                            + "(docker/clickhouse/replicated-schema.sql), not by lockwatch", table);
                }
            }
        }
        return own;
    }

    /** The table's months (active partitions) before the month of the horizon. */
    private static List<String> monthsBefore(Connection c, String table, String firstKept) throws SQLException {
        List<String> months = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT DISTINCT partition FROM system.parts
                 WHERE database = currentDatabase() AND table = ? AND active""")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String month = rs.getString(1);
                    if (MONTH.matcher(month).matches() && month.compareTo(firstKept) < 0) {
                        months.add(month);
                    }
                }
            }
        }
        return months;
    }

    /** A TTL per table where the server has them; @return whether it does */
    private boolean setTtls(Statement st, List<String> own) throws SQLException {
        String version;
        try (ResultSet rs = st.executeQuery("SELECT version()")) {
            rs.next();
            version = rs.getString(1);
        }
        if (!hasTtl(version)) {
            log.info("ClickHouse {} has no table TTL: history is removed a month at a time", version);
            return false;
        }
        for (String table : own) {
            st.execute(ttl(table, TABLES.get(table), keptDays));
        }
        return true;
    }

    static String ttl(String table, String column, long days) {
        return "ALTER TABLE " + table + " MODIFY TTL " + column + " + INTERVAL " + days + " DAY";
    }

    /** Table TTLs came with ClickHouse 19.6. */
    static boolean hasTtl(String version) {
        String[] parts = version.split("\\.");
        try {
            int major = Integer.parseInt(parts[0]);
            int minor = parts.length > 1 ? Integer.parseInt(parts[1]) : 0;
            return major > 19 || (major == 19 && minor >= 6);
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
