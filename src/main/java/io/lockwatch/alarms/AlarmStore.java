package io.lockwatch.alarms;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.transaction.support.TransactionTemplate;

/** Alarms as the API shows them: listed newest first, read one by one, acknowledged by an operator. */
public class AlarmStore {

    /** What acknowledging found. */
    public enum Acknowledged { DONE, NOT_FOUND, ALREADY }

    /**
     * An alarm, the contract's Alarm: {@code active} until the door closes; {@code openSeconds}, how long it was
     * open, known once it closed.
     */
    public record Alarm(UUID id, String sensorId, String type, boolean active, Instant openedAt, int thresholdSeconds,
                        Instant raisedAt, Instant clearedAt, Double openSeconds, Instant acknowledgedAt,
                        String acknowledgedBy, String comment) {
    }

    private static final String VIEW = """
            SELECT a.id, a.sensor_id, a.type, a.opened_at, a.threshold_seconds, a.raised_at, a.cleared_at,
                   a.acknowledged_at, a.acknowledged_by, a.ack_comment
              FROM alarms a
            """;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    public AlarmStore(JdbcTemplate jdbc, TransactionTemplate tx) {
        this.jdbc = jdbc;
        this.tx = tx;
    }

    /**
     * A page of alarms, newest raised first, up to {@code limit + 1} (the extra one says a next page exists).
     *
     * @param active null: all; true: not cleared yet; false: cleared
     * @param client only alarms of sensors linked to this client now
     * @param after  the (raised_at, id) of the last alarm of the previous page, or null
     */
    public List<Alarm> list(String sensor, UUID client, Boolean active, long from, long to, Timestamp afterRaisedAt,
                            UUID afterId, int limit) {
        return jdbc.query(VIEW + """
                 WHERE (?::text IS NULL OR a.sensor_id = ?)
                   AND (?::uuid IS NULL OR EXISTS (SELECT 1 FROM client_sensors cs
                                                    WHERE cs.client_id = ? AND cs.sensor_id = a.sensor_id))
                   AND (?::boolean IS NULL OR (a.cleared_at IS NULL) = ?)
                   AND a.raised_at >= ? AND a.raised_at < ?
                   AND (?::timestamptz IS NULL OR (a.raised_at, a.id) < (?::timestamptz, ?::uuid))
                 ORDER BY a.raised_at DESC, a.id DESC
                 LIMIT ?""", ALARM, sensor, sensor, client, client, active, active, new Timestamp(from),
                new Timestamp(to), afterRaisedAt, afterRaisedAt, afterId, limit + 1);
    }

    /** @return the alarm, or null */
    public Alarm find(UUID id) {
        List<Alarm> found = jdbc.query(VIEW + " WHERE a.id = ?", ALARM, id);
        return found.isEmpty() ? null : found.get(0);
    }

    /** Acknowledges an alarm once, active or cleared: who, and what they say. */
    public Acknowledged acknowledge(UUID id, String by, String comment) {
        return tx.execute(status -> {
            List<Boolean> acknowledged = jdbc.query("SELECT acknowledged_at IS NOT NULL FROM alarms WHERE id = ? FOR UPDATE",
                    (rs, i) -> rs.getBoolean(1), id);
            if (acknowledged.isEmpty()) {
                return Acknowledged.NOT_FOUND;
            }
            if (acknowledged.get(0)) {
                return Acknowledged.ALREADY;
            }
            jdbc.update("UPDATE alarms SET acknowledged_at = now(), acknowledged_by = ?, ack_comment = ? WHERE id = ?",
                    by, comment, id);
            return Acknowledged.DONE;
        });
    }

    private static final RowMapper<Alarm> ALARM = (rs, i) -> {
        Timestamp opened = rs.getTimestamp("opened_at");
        Timestamp cleared = rs.getTimestamp("cleared_at");
        return new Alarm(rs.getObject("id", UUID.class), rs.getString("sensor_id"), rs.getString("type"), cleared == null,
                opened.toInstant(), rs.getInt("threshold_seconds"), time(rs, "raised_at"),
                cleared == null ? null : cleared.toInstant(),
                cleared == null ? null : (cleared.getTime() - opened.getTime()) / 1000.0, time(rs, "acknowledged_at"),
                rs.getString("acknowledged_by"), rs.getString("ack_comment"));
    };

    private static Instant time(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
