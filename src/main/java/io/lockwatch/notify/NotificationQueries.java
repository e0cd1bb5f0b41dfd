package io.lockwatch.notify;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * The notifications as an operator looks at them (the API's {@code /notifications}): listed newest first, and one
 * with the attempts made; the contract's Notification and NotificationDetail, field for field.
 */
public class NotificationQueries {

    private static final String VIEW = """
            SELECT id, client_id, sensor_id, type, sequence, status, attempts, next_attempt_at, last_status, last_error,
                   superseded_by, superseded_reason, created_at, finished_at
              FROM notifications
            """;

    /** A notification, the contract's Notification; {@code nextAttemptAt} only while it is pending. */
    public record Notification(UUID id, UUID clientId, String sensorId, String type, long sequence, String status,
                               int attempts, Instant nextAttemptAt, Integer lastStatus, String lastError,
                               UUID supersededBy, String supersededReason, Instant createdAt, Instant finishedAt) {
    }

    /** One attempt made at a notification. */
    public record AttemptMade(int attempt, Integer statusCode, String error, int durationMs, Instant attemptedAt) {
    }

    /** The contract's NotificationDetail: a notification and the attempts made at it, oldest first. */
    public record NotificationDetail(Notification notification, List<AttemptMade> attemptsMade) {
    }

    private final JdbcTemplate jdbc;

    public NotificationQueries(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * Newest first, up to {@code limit}, each filter optional (null), after the cursor (created at, id) if one is
     * given.
     */
    public List<Notification> page(UUID client, String sensor, String status, Instant afterCreatedAt, UUID afterId,
                                   int limit) {
        Timestamp after = afterCreatedAt == null ? null : Timestamp.from(afterCreatedAt);
        return jdbc.query(VIEW + """
                 WHERE (?::uuid IS NULL OR client_id = ?) AND (?::text IS NULL OR sensor_id = ?)
                   AND (?::text IS NULL OR status = ?)
                   AND (?::timestamptz IS NULL OR (created_at, id) < (?::timestamptz, ?::uuid))
                 ORDER BY created_at DESC, id DESC
                 LIMIT ?""", NOTIFICATION, client, client, sensor, sensor, status, status, after, after, afterId, limit);
    }

    public Optional<Notification> find(UUID id) {
        return jdbc.query(VIEW + " WHERE id = ?", NOTIFICATION, id).stream().findFirst();
    }

    /** The attempts made at a notification, oldest first. */
    public List<AttemptMade> attemptsOf(UUID id) {
        return jdbc.query("""
                SELECT attempt, status_code, error, duration_ms, attempted_at FROM delivery_attempts
                 WHERE notification_id = ? ORDER BY attempted_at, attempt""", (rs, i) -> {
            int code = rs.getInt(2);
            return new AttemptMade(rs.getInt(1), rs.wasNull() ? null : code, rs.getString(3), rs.getInt(4),
                    rs.getTimestamp(5).toInstant());
        }, id);
    }

    private static final RowMapper<Notification> NOTIFICATION = (rs, i) -> {
        int code = rs.getInt("last_status");
        Integer lastStatus = rs.wasNull() ? null : code;
        return new Notification(rs.getObject("id", UUID.class), rs.getObject("client_id", UUID.class),
                rs.getString("sensor_id"), rs.getString("type"), rs.getLong("sequence"), rs.getString("status"),
                rs.getInt("attempts"), "pending".equals(rs.getString("status")) ? time(rs, "next_attempt_at") : null,
                lastStatus, rs.getString("last_error"), rs.getObject("superseded_by", UUID.class),
                rs.getString("superseded_reason"), time(rs, "created_at"), time(rs, "finished_at"));
    };

    private static Instant time(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
