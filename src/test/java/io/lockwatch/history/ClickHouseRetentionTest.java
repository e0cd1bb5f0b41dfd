package io.lockwatch.history;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which ClickHouse has table TTLs, and the TTL each table gets. */
class ClickHouseRetentionTest {

    @Test
    void tableTtlsCameWithClickHouse19Point6() {
        assertThat(ClickHouseRetention.hasTtl("18.16.1")).isFalse();
        assertThat(ClickHouseRetention.hasTtl("19.5.4.22")).isFalse();
        assertThat(ClickHouseRetention.hasTtl("19.6.2.11")).isTrue();
        assertThat(ClickHouseRetention.hasTtl("24.8.4.13")).isTrue();
        assertThat(ClickHouseRetention.hasTtl("unknown")).isFalse();
    }

    @Test
    void eachTableExpiresByItsOwnTimeColumn() {
        assertThat(ClickHouseRetention.ttl("readings", ClickHouseRetention.TABLES.get("readings"), 90))
                .isEqualTo("ALTER TABLE readings MODIFY TTL measured_at + INTERVAL 90 DAY");
        assertThat(ClickHouseRetention.TABLES).containsOnlyKeys("readings", "events", "delivery_attempts");
    }
}
