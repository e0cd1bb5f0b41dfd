package io.lockwatch.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.lockwatch.history.HistoryRecords.EventRecord;
import io.lockwatch.history.HistoryStore.AttemptFilter;
import io.lockwatch.infra.clickhouse.ClickHouse;
import io.lockwatch.infra.clickhouse.ClickHouseSettings;
import io.lockwatch.ingest.IngestProperties;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/** The history store contract on the real ClickHouse, and readings and events flowing into it. */
@CamelSpringBootTest
@SpringBootTest
@ActiveProfiles("external")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class ClickHouseHistoryStoreIT extends HistoryStoreContract {

    static final long FAR = 4_102_444_800_000L;

    @Autowired RabbitTemplate rabbit;
    @Autowired IngestProperties ingest;
    @Autowired JdbcTemplate jdbc;
    @Autowired ClickHouseSettings clickHouse;

    @Override
    void recordEvent(String sensor, long sequence, String type, Integer state, Integer previous, long at) {
        ((ClickHouseHistoryStore) store).writeEvents(List.of(new EventRecord(sensor, sequence, type, state, previous, at)));
    }

    @Autowired ClickHouse clickHouseServer;

    /**
     * Retention on ClickHouse: a month wholly before the horizon is dropped, the months after it are kept. The
     * horizon here is in 2001, so that nothing but this test's own month of 2000 is old enough to go.
     */
    @Test
    void aMonthWhollyPastTheRetentionIsDroppedAndLaterOnesKept() {
        String s = sensor();
        long december2000 = java.time.Instant.parse("2000-12-15T10:00:00Z").toEpochMilli();
        long june2001 = java.time.Instant.parse("2001-06-15T10:00:00Z").toEpochMilli();
        store.writeReadings(List.of(
                new HistoryRecords.ReadingRecord(s + "/old", s, 0, december2000, december2000, "reading", true, "old"),
                new HistoryRecords.ReadingRecord(s + "/kept", s, 1, june2001, june2001, "reading", true, "kept")));

        ClickHouseRetention retention = new ClickHouseRetention(clickHouseServer, Duration.ofDays(90));
        try (java.sql.Connection c = clickHouseServer.connection()) {
            assertThat(retention.ownTables(c)).containsExactly("delivery_attempts", "events", "readings");
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
        retention.removeBefore(java.time.Instant.parse("2001-01-10T00:00:00Z"));

        assertThat(store.readings(s, 0, FAR, 10, null).items()).extracting(HistoryRecords.ReadingRecord::readingId)
                .containsExactly(s + "/kept");
    }

    @Test
    void theStoreIsClickHouse() {
        assertThat(store).isInstanceOf(ClickHouseHistoryStore.class);
    }

    @Test
    void aReadingIsQueryableWithinTwoSecondsAndItsEventIsExported() {
        String s = sensor();
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'room')", s);
        long ts = System.currentTimeMillis() - 1000;
        String body = "{\"sensor_id\":\"" + s + "\",\"data\":1,\"ts\":" + ts + "}";

        rabbit.send(ingest.exchange(), s, new Message(body.getBytes(StandardCharsets.UTF_8), new MessageProperties()));

        await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(100))
                .until(() -> store.readings(s, 0, FAR, 10, null).items().size() == 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> store.events(s, 0, FAR, 10, null).items().size() == 1);
        EventRecord e = store.events(s, 0, FAR, 10, null).items().get(0);
        assertThat(e.type()).isEqualTo("sensor.state_changed");
        assertThat(e.occurredAt()).isEqualTo(ts);
        assertThat(store.readings(s, 0, FAR, 10, null).items().get(0).registered()).isTrue();
    }

    /**
     * A range query reads only the month partitions of its range, and finds its sensor by the primary key:
     * ClickHouse refuses it otherwise with these settings on. (On the millisecond column alone, it opened every
     * partition of the table, so a query's cost grew with the months of history kept.)
     */
    @Test
    void rangeQueriesUseThePartitionIndexAndThePrimaryKey() throws SQLException {
        String s = sensor();
        store.writeReadings(List.of(reading(s, 1)));
        recordEvent(s, 1, "sensor.state_changed", 1, null, T0 + 1000);

        ClickHouseHistoryStore keyed = storeRefusingQueriesWithout("force_index_by_date", "force_primary_key");
        assertThat(keyed.readings(s, T0, T0 + DAY, 10, null).items()).containsExactly(reading(s, 1));
        assertThat(keyed.events(s, T0, T0 + DAY, 10, null).items()).hasSize(1);
        assertThat(keyed.dailyCounts(List.of(s), T0, T0 + DAY)).hasSize(1);
        // delivery attempts are keyed by notification; by client or sensor they are found by month only
        ClickHouseHistoryStore dated = storeRefusingQueriesWithout("force_index_by_date");
        for (AttemptFilter f : List.of(new AttemptFilter(UUID.randomUUID().toString(), null, null),
                new AttemptFilter(null, UUID.randomUUID().toString(), null), new AttemptFilter(null, null, s))) {
            assertThat(dated.attempts(f, T0, T0 + DAY, 10)).isEmpty();
        }
    }

    /** A store on a ClickHouse session of its own with the given settings set to 1. */
    private ClickHouseHistoryStore storeRefusingQueriesWithout(String... settings) throws SQLException {
        String url = clickHouse.url() + (clickHouse.url().contains("?") ? "&" : "?") + "session_id=lockwatch-it-"
                + UUID.randomUUID();
        ClickHouse session = new ClickHouse(new ClickHouseSettings(url, clickHouse.username(), clickHouse.password(),
                clickHouse.socketTimeout(), 1));
        try (Connection c = session.connection(); Statement st = c.createStatement()) {
            for (String setting : settings) {
                st.execute("SET " + setting + " = 1"); // names given by the test itself
            }
        }
        return new ClickHouseHistoryStore(session);
    }
}
