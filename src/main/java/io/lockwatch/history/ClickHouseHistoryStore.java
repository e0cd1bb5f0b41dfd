package io.lockwatch.history;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import io.lockwatch.history.HistoryRecords.AttemptRecord;
import io.lockwatch.history.HistoryRecords.DailyCount;
import io.lockwatch.history.HistoryRecords.EventRecord;
import io.lockwatch.history.HistoryRecords.Page;
import io.lockwatch.history.HistoryRecords.ReadingRecord;
import io.lockwatch.infra.clickhouse.ClickHouse;
import ru.yandex.clickhouse.ClickHouseConnection;
import ru.yandex.clickhouse.ClickHouseStatement;
import org.springframework.dao.DataAccessResourceFailureException;

/**
 * History in ClickHouse. Each write is one batched INSERT (one HTTP request); reads use {@code FINAL} so a
 * row written twice is shown once, and bound the partition column as well as the millisecond one, so that
 * they read only the months of their range ({@link #partitionBounds}). A ClickHouse that is away surfaces as a
 * {@link DataAccessResourceFailureException}, which the route configuration waits out.
 */
public class ClickHouseHistoryStore implements HistoryStore {

    /** The last second a ClickHouse DateTime holds (2106-02-07T06:28:15Z). */
    static final long DATETIME_MAX_SECONDS = 4_294_967_295L;

    private final ClickHouse clickHouse;

    public ClickHouseHistoryStore(ClickHouse clickHouse) {
        this.clickHouse = clickHouse;
    }

    /**
     * One insert in RowBinary, written straight from the records: the driver's prepared statement would format
     * every value into SQL text (escaping each string character by character) for ClickHouse to parse back, about
     * 5% of the service's CPU at 7,000 readings/s, and more of ClickHouse's.
     */
    @Override
    public void writeReadings(List<ReadingRecord> readings) {
        if (readings.isEmpty()) {
            return;
        }
        run(c -> {
            try (ClickHouseStatement statement = c.unwrap(ClickHouseConnection.class).createStatement()) {
                statement.sendRowBinaryStream("""
                        INSERT INTO readings (reading_id, sensor_id, data, measured_at_ms, received_at_ms, time_source,
                                              registered, message_id)""", row -> {
                    for (ReadingRecord r : readings) {
                        row.writeString(r.readingId());
                        row.writeString(r.sensorId());
                        row.writeUInt8(r.data());
                        row.writeInt64(r.measuredAt());
                        row.writeInt64(r.receivedAt());
                        row.writeString(r.timeSource());
                        row.writeUInt8(r.registered());
                        row.writeString(r.messageId() == null ? "" : r.messageId());
                    }
                });
            }
            return null;
        });
    }

    public void writeEvents(List<EventRecord> events) {
        if (events.isEmpty()) {
            return;
        }
        run(c -> {
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO events (sensor_id, sequence, type, state, previous_state, occurred_at_ms)
                    VALUES (?, ?, ?, ?, ?, ?)""")) {
                for (EventRecord e : events) {
                    ps.setString(1, e.sensorId());
                    ps.setLong(2, e.sequence());
                    ps.setString(3, e.type());
                    setNullableInt(ps, 4, e.state());
                    setNullableInt(ps, 5, e.previousState());
                    ps.setLong(6, e.occurredAt());
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            return null;
        });
    }

    public void writeAttempts(List<AttemptRecord> attempts) {
        if (attempts.isEmpty()) {
            return;
        }
        run(c -> {
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO delivery_attempts (notification_id, attempt, client_id, sensor_id, event_type,
                                                   status_code, error, duration_ms, attempted_at_ms)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""")) {
                for (AttemptRecord a : attempts) {
                    ps.setString(1, a.notificationId());
                    ps.setInt(2, a.attempt());
                    ps.setString(3, a.clientId());
                    ps.setString(4, a.sensorId());
                    ps.setString(5, a.eventType());
                    setNullableInt(ps, 6, a.statusCode());
                    ps.setString(7, a.error() == null ? "" : a.error());
                    ps.setInt(8, a.durationMs());
                    ps.setLong(9, a.attemptedAt());
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            return null;
        });
    }

    @Override
    public Page<ReadingRecord> readings(String sensorId, long from, long to, int limit, String cursor) {
        Cursor after = Cursor.parse(cursor);
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement("""
                    SELECT reading_id, sensor_id, data, measured_at_ms, received_at_ms, time_source, registered, message_id
                      FROM readings FINAL
                     WHERE sensor_id = ? AND measured_at_ms >= ? AND measured_at_ms < ?
                       AND measured_at >= toDateTime(?) AND measured_at <= toDateTime(?)
                       AND (? = 1 OR measured_at_ms < ? OR (measured_at_ms = ? AND reading_id < ?))
                     ORDER BY measured_at_ms DESC, reading_id DESC
                     LIMIT ?""")) {
                long[] seconds = partitionBounds(from, to);
                ps.setString(1, sensorId);
                ps.setLong(2, from);
                ps.setLong(3, to);
                ps.setLong(4, seconds[0]);
                ps.setLong(5, seconds[1]);
                ps.setInt(6, after == null ? 1 : 0);
                ps.setLong(7, after == null ? 0 : after.time());
                ps.setLong(8, after == null ? 0 : after.time());
                ps.setString(9, after == null ? "" : after.tieBreaker());
                ps.setInt(10, limit + 1);
                List<ReadingRecord> rows = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String messageId = rs.getString(8);
                        rows.add(new ReadingRecord(rs.getString(1), rs.getString(2), rs.getInt(3), rs.getLong(4),
                                rs.getLong(5), rs.getString(6), rs.getInt(7) == 1,
                                messageId == null || messageId.isEmpty() ? null : messageId));
                    }
                }
                return PostgresHistoryStore.page(rows, limit, r -> new Cursor(r.measuredAt(), r.readingId()));
            }
        });
    }

    @Override
    public Page<EventRecord> events(String sensorId, long from, long to, int limit, String cursor) {
        Cursor after = Cursor.parse(cursor);
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement("""
                    SELECT sensor_id, sequence, type, state, previous_state, occurred_at_ms
                      FROM events FINAL
                     WHERE sensor_id = ? AND occurred_at_ms >= ? AND occurred_at_ms < ?
                       AND occurred_at >= toDateTime(?) AND occurred_at <= toDateTime(?)
                       AND (? = 1 OR sequence < ?)
                     ORDER BY sequence DESC
                     LIMIT ?""")) {
                long[] seconds = partitionBounds(from, to);
                ps.setString(1, sensorId);
                ps.setLong(2, from);
                ps.setLong(3, to);
                ps.setLong(4, seconds[0]);
                ps.setLong(5, seconds[1]);
                ps.setInt(6, after == null ? 1 : 0);
                ps.setLong(7, after == null ? 0 : after.sequence());
                ps.setInt(8, limit + 1);
                List<EventRecord> rows = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows.add(new EventRecord(rs.getString(1), rs.getLong(2), rs.getString(3), nullableInt(rs, 4),
                                nullableInt(rs, 5), rs.getLong(6)));
                    }
                }
                return PostgresHistoryStore.page(rows, limit, e -> new Cursor(e.occurredAt(), String.valueOf(e.sequence())));
            }
        });
    }

    @Override
    public List<AttemptRecord> attempts(AttemptFilter f, long from, long to, int limit) {
        String column = f.notificationId() != null ? "notification_id" : f.clientId() != null ? "client_id" : "sensor_id";
        String value = f.notificationId() != null ? f.notificationId() : f.clientId() != null ? f.clientId() : f.sensorId();
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement("""
                    SELECT notification_id, client_id, sensor_id, event_type, attempt, status_code, error, duration_ms,
                           attempted_at_ms
                      FROM delivery_attempts FINAL
                     WHERE %s = ? AND attempted_at_ms >= ? AND attempted_at_ms < ?
                       AND attempted_at >= toDateTime(?) AND attempted_at <= toDateTime(?)
                     ORDER BY attempted_at_ms, attempt
                     LIMIT ?""".formatted(column))) {
                long[] seconds = partitionBounds(from, to);
                ps.setString(1, value);
                ps.setLong(2, from);
                ps.setLong(3, to);
                ps.setLong(4, seconds[0]);
                ps.setLong(5, seconds[1]);
                ps.setInt(6, limit);
                List<AttemptRecord> rows = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String error = rs.getString(7);
                        rows.add(new AttemptRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4),
                                rs.getInt(5), nullableInt(rs, 6), error == null || error.isEmpty() ? null : error,
                                rs.getInt(8), rs.getLong(9)));
                    }
                }
                return rows;
            }
        });
    }

    @Override
    public List<DailyCount> dailyCounts(Collection<String> sensorIds, long from, long to) {
        if (sensorIds.isEmpty()) {
            return List.of();
        }
        List<String> ids = new ArrayList<>(sensorIds);
        String placeholders = String.join(", ", java.util.Collections.nCopies(ids.size(), "?"));
        return run(c -> {
            try (PreparedStatement ps = c.prepareStatement("""
                    SELECT intDiv(occurred_at_ms, 86400000) AS day,
                           countIf(type = 'sensor.state_changed'), countIf(type = 'sensor.connection_lost')
                      FROM events FINAL
                     WHERE sensor_id IN (%s) AND occurred_at_ms >= ? AND occurred_at_ms < ?
                       AND occurred_at >= toDateTime(?) AND occurred_at <= toDateTime(?)
                     GROUP BY day
                     ORDER BY day""".formatted(placeholders))) {
                long[] seconds = partitionBounds(from, to);
                int i = 1;
                for (String id : ids) {
                    ps.setString(i++, id);
                }
                ps.setLong(i++, from);
                ps.setLong(i++, to);
                ps.setLong(i++, seconds[0]);
                ps.setLong(i, seconds[1]);
                List<DailyCount> rows = new ArrayList<>();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        String day = java.time.LocalDate.ofEpochDay(rs.getLong(1)).toString();
                        rows.add(new DailyCount(day, rs.getLong(2), rs.getLong(3)));
                    }
                }
                return rows;
            }
        });
    }

    /**
     * The range [from, to) of a millisecond column as bounds, in whole seconds, on the DateTime column the table
     * is partitioned by ({@code measured_at}, {@code occurred_at}, {@code attempted_at}: the millisecond column
     * divided by 1000). ClickHouse skips a month partition only on a condition on the partition key's own
     * column; on the millisecond column alone it opens every partition, so a query's cost would grow with the
     * months of history kept. The bounds never exclude a row of the range: when the range reaches outside what
     * a DateTime holds (1970 to 2106), or is empty, they are the whole DateTime range.
     *
     * @return {lowest second, highest second}
     */
    static long[] partitionBounds(long from, long to) {
        if (from < 0 || from >= to || to > (DATETIME_MAX_SECONDS + 1) * 1000) {
            return new long[] {0, DATETIME_MAX_SECONDS};
        }
        return new long[] {from / 1000, (to - 1) / 1000};
    }

    private interface Work<T> {
        T on(Connection c) throws SQLException;
    }

    private <T> T run(Work<T> work) {
        try (Connection c = clickHouse.connection()) {
            return work.on(c);
        } catch (SQLException e) {
            throw new DataAccessResourceFailureException("ClickHouse at " + clickHouse.address() + ": "
                    + String.valueOf(e.getMessage()).lines().findFirst().orElse(""), e);
        }
    }

    private static void setNullableInt(PreparedStatement ps, int i, Integer v) throws SQLException {
        if (v == null) {
            ps.setNull(i, Types.INTEGER);
        } else {
            ps.setInt(i, v);
        }
    }

    private static Integer nullableInt(ResultSet rs, int column) throws SQLException {
        int v = rs.getInt(column);
        return rs.wasNull() ? null : v;
    }
}
