package io.lockwatch.history;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.lockwatch.infra.clickhouse.ClickHouse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ClickHouse schema, versioned: each version's statements are idempotent ({@code IF NOT EXISTS}) and
 * recorded in {@code schema_migrations} once applied, so instances starting together converge. Written for
 * ClickHouse 18.16 and current servers alike: no DateTime64, no TTL; milliseconds kept as Int64 beside a
 * DateTime (derived, for partitioning); ReplacingMergeTree keyed by the identity of each row, read with FINAL,
 * so a row written twice after a crash is shown once.
 */
public class ClickHouseSchema {

    private static final Logger log = LoggerFactory.getLogger(ClickHouseSchema.class);

    record Version(int number, String description, List<String> statements) {
    }

    static final List<Version> VERSIONS = List.of(
            new Version(1, "readings, events, delivery attempts", List.of(
                    """
                    CREATE TABLE IF NOT EXISTS readings (
                        reading_id      String,
                        sensor_id       String,
                        data            UInt8,
                        measured_at_ms  Int64,
                        received_at_ms  Int64,
                        time_source     String,
                        registered      UInt8,
                        message_id      String,
                        measured_at     DateTime DEFAULT toDateTime(intDiv(measured_at_ms, 1000))
                    ) ENGINE = ReplacingMergeTree()
                    PARTITION BY toYYYYMM(measured_at)
                    ORDER BY (sensor_id, measured_at_ms, reading_id)""",
                    """
                    CREATE TABLE IF NOT EXISTS events (
                        sensor_id       String,
                        sequence        Int64,
                        type            String,
                        state           Nullable(UInt8),
                        previous_state  Nullable(UInt8),
                        occurred_at_ms  Int64,
                        occurred_at     DateTime DEFAULT toDateTime(intDiv(occurred_at_ms, 1000))
                    ) ENGINE = ReplacingMergeTree()
                    PARTITION BY toYYYYMM(occurred_at)
                    ORDER BY (sensor_id, sequence)""",
                    """
                    CREATE TABLE IF NOT EXISTS delivery_attempts (
                        notification_id String,
                        attempt         UInt32,
                        client_id       String,
                        sensor_id       String,
                        event_type      String,
                        status_code     Nullable(Int32),
                        error           String,
                        duration_ms     UInt32,
                        attempted_at_ms Int64,
                        attempted_at    DateTime DEFAULT toDateTime(intDiv(attempted_at_ms, 1000))
                    ) ENGINE = ReplacingMergeTree()
                    PARTITION BY toYYYYMM(attempted_at)
                    ORDER BY (notification_id, attempt)""")));

    private final ClickHouse clickHouse;

    public ClickHouseSchema(ClickHouse clickHouse) {
        this.clickHouse = clickHouse;
    }

    public void migrate() throws SQLException {
        try (Connection c = clickHouse.connection(); Statement st = c.createStatement()) {
            st.execute("""
                    CREATE TABLE IF NOT EXISTS schema_migrations (
                        version     UInt32,
                        description String,
                        applied_at  DateTime DEFAULT now()
                    ) ENGINE = MergeTree() ORDER BY version""");
            Set<Integer> applied = new HashSet<>();
            try (ResultSet rs = st.executeQuery("SELECT version FROM schema_migrations")) {
                while (rs.next()) {
                    applied.add(rs.getInt(1));
                }
            }
            for (Version v : VERSIONS) {
                if (applied.contains(v.number())) {
                    continue;
                }
                for (String statement : v.statements()) {
                    st.execute(statement);
                }
                try (PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO schema_migrations (version, description) VALUES (?, ?)")) {
                    ps.setInt(1, v.number());
                    ps.setString(2, v.description());
                    ps.executeUpdate();
                }
                log.info("ClickHouse schema version {} applied: {}", v.number(), v.description());
            }
        }
    }
}
