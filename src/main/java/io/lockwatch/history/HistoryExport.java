package io.lockwatch.history;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;

import io.lockwatch.history.HistoryRecords.AttemptRecord;
import io.lockwatch.history.HistoryRecords.EventRecord;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * With ClickHouse: copies events and delivery attempts, recorded durably in PostgreSQL, to ClickHouse. Rows not
 * yet exported are taken with {@code FOR UPDATE SKIP LOCKED} (any number of instances, no overlap), written with
 * one insert, and marked exported in the same transaction only after ClickHouse accepted them; a crash in
 * between writes them again, and ClickHouse's ReplacingMergeTree shows them once.
 */
public class HistoryExport {

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final ClickHouseHistoryStore clickHouse;
    private final int batch;
    private final Counter eventsExported;
    private final Counter attemptsExported;

    public HistoryExport(JdbcTemplate jdbc, TransactionTemplate tx, ClickHouseHistoryStore clickHouse, int batch,
                         MeterRegistry meters) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.clickHouse = clickHouse;
        this.batch = batch;
        // beside lockwatch.state.changes and the attempts made: how far the history of each has caught up
        this.eventsExported = meters.counter("lockwatch.history.exported", "kind", "events");
        this.attemptsExported = meters.counter("lockwatch.history.exported", "kind", "attempts");
    }

    /** @return rows exported */
    public int export() {
        int total = 0;
        int n;
        do {
            n = tx.execute(status -> exportEvents());
            eventsExported.increment(n);
            total += n;
        } while (n == batch);
        do {
            n = tx.execute(status -> exportAttempts());
            attemptsExported.increment(n);
            total += n;
        } while (n == batch);
        return total;
    }

    private int exportEvents() {
        List<Long> ids = new java.util.ArrayList<>();
        List<EventRecord> events = jdbc.query("""
                SELECT id, sensor_id, sequence, type, state, previous_state, (extract(epoch FROM occurred_at) * 1000)::bigint
                  FROM sensor_events WHERE NOT exported ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED""",
                (rs, i) -> {
                    ids.add(rs.getLong(1));
                    short state = rs.getShort(5);
                    Integer s = rs.wasNull() ? null : (int) state;
                    short previous = rs.getShort(6);
                    Integer p = rs.wasNull() ? null : (int) previous;
                    return new EventRecord(rs.getString(2), rs.getLong(3), rs.getString(4), s, p, rs.getLong(7));
                }, batch);
        clickHouse.writeEvents(events);
        markExported("sensor_events", ids);
        return events.size();
    }

    private int exportAttempts() {
        List<Long> ids = new java.util.ArrayList<>();
        List<AttemptRecord> attempts = jdbc.query("""
                SELECT id, notification_id::text, client_id::text, sensor_id, event_type, attempt, status_code, error,
                       duration_ms, (extract(epoch FROM attempted_at) * 1000)::bigint
                  FROM delivery_attempts WHERE NOT exported ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED""",
                (rs, i) -> {
                    ids.add(rs.getLong(1));
                    int status = rs.getInt(7);
                    Integer code = rs.wasNull() ? null : status;
                    return new AttemptRecord(rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5),
                            rs.getInt(6), code, rs.getString(8), rs.getInt(9), rs.getLong(10));
                }, batch);
        clickHouse.writeAttempts(attempts);
        markExported("delivery_attempts", ids);
        return attempts.size();
    }

    private void markExported(String table, List<Long> ids) {
        if (ids.isEmpty()) {
            return;
        }
        // the table name is one of two constants of this class
        jdbc.execute((java.sql.Connection c) -> {
            try (var ps = c.prepareStatement("UPDATE " + table + " SET exported = true WHERE id = ANY (?)")) {
                ps.setArray(1, c.createArrayOf("int8", ids.toArray()));
                return ps.executeUpdate();
            }
        });
    }
}
