package io.lockwatch.history;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import io.lockwatch.history.HistoryRecords.AttemptRecord;
import io.lockwatch.history.HistoryRecords.DailyCount;
import io.lockwatch.history.HistoryRecords.EventRecord;
import io.lockwatch.history.HistoryRecords.Page;
import io.lockwatch.history.HistoryRecords.ReadingRecord;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * History in PostgreSQL, for the embedded default: readings in {@code reading_history} (a redelivered reading
 * is the same primary key, written once); events and attempts are read where they are recorded.
 */
class PostgresHistoryStore implements HistoryStore {

    private final JdbcTemplate jdbc;

    public PostgresHistoryStore(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void writeReadings(List<ReadingRecord> readings) {
        if (readings.isEmpty()) {
            return;
        }
        int n = readings.size();
        Object[] ids = new Object[n], sensors = new Object[n], data = new Object[n], measured = new Object[n],
                received = new Object[n], sources = new Object[n], registered = new Object[n], messageIds = new Object[n];
        for (int i = 0; i < n; i++) {
            ReadingRecord r = readings.get(i);
            ids[i] = r.readingId();
            sensors[i] = r.sensorId();
            data[i] = (short) r.data();
            measured[i] = r.measuredAt();
            received[i] = r.receivedAt();
            sources[i] = r.timeSource();
            registered[i] = r.registered();
            messageIds[i] = r.messageId();
        }
        jdbc.execute((java.sql.Connection c) -> {
            try (var ps = c.prepareStatement("""
                    INSERT INTO reading_history (reading_id, sensor_id, data, measured_at, received_at, time_source,
                                                 registered, message_id)
                    SELECT u.id, u.sensor, u.data, to_timestamp(u.measured / 1000.0), to_timestamp(u.received / 1000.0),
                           u.source, u.registered, u.message_id
                      FROM unnest(?::text[], ?::varchar[], ?::smallint[], ?::bigint[], ?::bigint[], ?::text[],
                                  ?::boolean[], ?::text[])
                           AS u(id, sensor, data, measured, received, source, registered, message_id)
                    ON CONFLICT (reading_id) DO NOTHING""")) {
                ps.setArray(1, c.createArrayOf("text", ids));
                ps.setArray(2, c.createArrayOf("varchar", sensors));
                ps.setArray(3, c.createArrayOf("int2", data));
                ps.setArray(4, c.createArrayOf("int8", measured));
                ps.setArray(5, c.createArrayOf("int8", received));
                ps.setArray(6, c.createArrayOf("text", sources));
                ps.setArray(7, c.createArrayOf("bool", registered));
                ps.setArray(8, c.createArrayOf("text", messageIds));
                return ps.executeUpdate();
            }
        });
    }

    @Override
    public Page<ReadingRecord> readings(String sensorId, long from, long to, int limit, String cursor) {
        Cursor after = Cursor.parse(cursor);
        List<ReadingRecord> rows = jdbc.query("""
                SELECT reading_id, sensor_id, data, (extract(epoch FROM measured_at) * 1000)::bigint,
                       (extract(epoch FROM received_at) * 1000)::bigint, time_source, registered, message_id
                  FROM reading_history
                 WHERE sensor_id = ? AND measured_at >= ? AND measured_at < ?
                   AND (?::boolean OR (measured_at, reading_id) < (?, ?))
                 ORDER BY measured_at DESC, reading_id DESC
                 LIMIT ?""",
                (rs, i) -> new ReadingRecord(rs.getString(1), rs.getString(2), rs.getInt(3), rs.getLong(4), rs.getLong(5),
                        rs.getString(6), rs.getBoolean(7), rs.getString(8)),
                sensorId, ts(from), ts(to), after == null, ts(after == null ? 0 : after.time()),
                after == null ? "" : after.tieBreaker(), limit + 1);
        return page(rows, limit, r -> new Cursor(r.measuredAt(), r.readingId()));
    }

    @Override
    public Page<EventRecord> events(String sensorId, long from, long to, int limit, String cursor) {
        Cursor after = Cursor.parse(cursor);
        List<EventRecord> rows = jdbc.query("""
                SELECT sensor_id, sequence, type, state, previous_state, (extract(epoch FROM occurred_at) * 1000)::bigint
                  FROM sensor_events
                 WHERE sensor_id = ? AND occurred_at >= ? AND occurred_at < ?
                   AND (?::boolean OR sequence < ?)
                 ORDER BY sequence DESC
                 LIMIT ?""",
                (rs, i) -> new EventRecord(rs.getString(1), rs.getLong(2), rs.getString(3), integer(rs, 4), integer(rs, 5),
                        rs.getLong(6)),
                sensorId, ts(from), ts(to), after == null, after == null ? 0 : after.sequence(), limit + 1);
        return page(rows, limit, e -> new Cursor(e.occurredAt(), String.valueOf(e.sequence())));
    }

    @Override
    public List<AttemptRecord> attempts(AttemptFilter f, long from, long to, int limit) {
        String column = f.notificationId() != null ? "notification_id::text" : f.clientId() != null ? "client_id::text" : "sensor_id";
        String value = f.notificationId() != null ? f.notificationId() : f.clientId() != null ? f.clientId() : f.sensorId();
        return jdbc.query("""
                SELECT notification_id::text, client_id::text, sensor_id, event_type, attempt, status_code, error,
                       duration_ms, (extract(epoch FROM attempted_at) * 1000)::bigint
                  FROM delivery_attempts
                 WHERE %s = ? AND attempted_at >= ? AND attempted_at < ?
                 ORDER BY attempted_at, attempt
                 LIMIT ?""".formatted(column),
                (rs, i) -> new AttemptRecord(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getInt(5),
                        integer(rs, 6), rs.getString(7), rs.getInt(8), rs.getLong(9)),
                value, ts(from), ts(to), limit);
    }

    @Override
    public List<DailyCount> dailyCounts(Collection<String> sensorIds, long from, long to) {
        if (sensorIds.isEmpty()) {
            return List.of();
        }
        return jdbc.query(con -> {
            var ps = con.prepareStatement("""
                    SELECT to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
                           count(*) FILTER (WHERE type = 'sensor.state_changed'),
                           count(*) FILTER (WHERE type = 'sensor.connection_lost')
                      FROM sensor_events
                     WHERE sensor_id = ANY (?) AND occurred_at >= ? AND occurred_at < ?
                     GROUP BY day
                     ORDER BY day""");
            ps.setArray(1, con.createArrayOf("varchar", sensorIds.toArray()));
            ps.setTimestamp(2, ts(from));
            ps.setTimestamp(3, ts(to));
            return ps;
        }, (rs, i) -> new DailyCount(rs.getString(1), rs.getLong(2), rs.getLong(3)));
    }

    static <T> Page<T> page(List<T> rows, int limit, java.util.function.Function<T, Cursor> key) {
        if (rows.size() <= limit) {
            return new Page<>(rows, null);
        }
        List<T> shown = new ArrayList<>(rows.subList(0, limit));
        return new Page<>(shown, key.apply(shown.get(limit - 1)).encode());
    }

    private static Timestamp ts(long millis) {
        return new Timestamp(millis);
    }

    private static Integer integer(ResultSet rs, int column) throws SQLException {
        int v = rs.getInt(column);
        return rs.wasNull() ? null : v;
    }
}
