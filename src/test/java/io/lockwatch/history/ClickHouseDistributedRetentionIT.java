package io.lockwatch.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;

import io.lockwatch.infra.clickhouse.ClickHouse;
import io.lockwatch.infra.clickhouse.ClickHouseSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Against the real ClickHouse ({@code scripts/services.sh up}): history laid out as docker/clickhouse/replicated-schema.sql
 * lays it out, Distributed tables under lockwatch's names over local tables (here over the server's own
 * {@code test_shard_localhost} cluster, one shard). Retention leaves the Distributed tables alone, without failing,
 * and touches nothing of the local tables: their TTL is theirs.
 */
class ClickHouseDistributedRetentionIT {

    private static final String DB = "lockwatch_distributed_it";
    private ClickHouse clickHouse;

    @BeforeEach
    void schema() throws Exception {
        try (ClickHouse server = clickHouse("default"); Connection c = server.connection(); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + DB);
            st.execute("CREATE DATABASE " + DB);
            for (var t : ClickHouseRetention.TABLES.entrySet()) {
                st.execute("CREATE TABLE " + DB + "." + t.getKey() + "_local (sensor_id String, at_ms Int64, "
                        + t.getValue() + " DateTime) ENGINE = MergeTree() PARTITION BY toYYYYMM(" + t.getValue()
                        + ") ORDER BY (sensor_id, at_ms)");
                st.execute("CREATE TABLE " + DB + "." + t.getKey() + " AS " + DB + "." + t.getKey() + "_local "
                        + "ENGINE = Distributed(test_shard_localhost, " + DB + ", " + t.getKey() + "_local, cityHash64(sensor_id))");
                st.execute("INSERT INTO " + DB + "." + t.getKey() + "_local VALUES ('S1', 1, toDateTime('2000-12-15 10:00:00'))");
            }
        }
        clickHouse = clickHouse(DB);
    }

    @AfterEach
    void drop() throws Exception {
        clickHouse.close();
        try (ClickHouse server = clickHouse("default"); Connection c = server.connection(); Statement st = c.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + DB);
        }
    }

    @Test
    void distributedTablesAreLeftToTheirLocalTablesTtl() throws Exception {
        ClickHouseRetention retention = new ClickHouseRetention(clickHouse, Duration.ofDays(90));
        try (Connection c = clickHouse.connection()) {
            // neither months dropped nor a TTL set (which a Distributed table refuses on servers that have TTLs)
            assertThat(retention.ownTables(c)).isEmpty();
        }

        assertThatCode(() -> retention.removeBefore(Instant.parse("2001-06-10T00:00:00Z"))).doesNotThrowAnyException();
        // twice: the second pass is as quiet as the first
        assertThatCode(() -> retention.removeBefore(Instant.parse("2001-06-10T00:00:00Z"))).doesNotThrowAnyException();

        try (Connection c = clickHouse.connection(); Statement st = c.createStatement()) {
            for (String table : ClickHouseRetention.TABLES.keySet()) {
                try (ResultSet rs = st.executeQuery("SELECT count() FROM " + table + "_local")) {
                    rs.next();
                    assertThat(rs.getLong(1)).as(table + "_local keeps its month of 2000").isEqualTo(1);
                }
            }
        }
    }

    private static ClickHouse clickHouse(String database) {
        return new ClickHouse(new ClickHouseSettings("jdbc:clickhouse://127.0.0.1:8123/" + database, "default", "",
                Duration.ofSeconds(30), 2));
    }
}
