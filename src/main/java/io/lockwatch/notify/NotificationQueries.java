package io.lockwatch.notify;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * The notifications as an operator looks at them (the API's {@code /notifications}): listed newest first, and one
 * with the attempts made. Rows as the API shows them, field by field.
 */
public class NotificationQueries {

    /** The statuses a notification can have, as the API filters by them. */
    public static final List<String> STATUSES = List.of("pending", "delivering", "delivered", "dead", "superseded",
            "cancelled");

    private static final String VIEW = """
            SELECT id, client_id, sensor_id, type, sequence, status, attempts, next_attempt_at, last_status, last_error,
                   superseded_by, superseded_reason, created_at, finished_at
              FROM notifications
            """;

    private final JdbcTemplate jdbc;

    public NotificationQueries(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /**
     * Newest first, up to {@code limit}, each filter optional (null), after the cursor (created at, id) if one is
     * given.
     */
    public List<Map<String, Object>> page(UUID client, String sensor, String status, Instant afterCreatedAt,
                                          UUID afterId, int limit) {
        Timestamp after = afterCreatedAt == null ? null : Timestamp.from(afterCreatedAt);
        return jdbc.query(VIEW + """
                 WHERE (?::uuid IS NULL OR client_id = ?) AND (?::text IS NULL OR sensor_id = ?)
                   AND (?::text IS NULL OR status = ?)
                   AND (?::timestamptz IS NULL OR (created_at, id) < (?::timestamptz, ?::uuid))
                 ORDER BY created_at DESC, id DESC
                 LIMIT ?""", NOTIFICATION, client, client, sensor, sensor, status, status, after, after, afterId, limit);
    }

    public Optional<Map<String, Object>> find(UUID id) {
        return jdbc.query(VIEW + " WHERE id = ?", NOTIFICATION, id).stream().findFirst();
    }

    /** The attempts made at a notification, oldest first. */
    public List<Map<String, Object>> attemptsOf(UUID id) {
        return jdbc.query("""
                SELECT attempt, status_code, error, duration_ms, attempted_at FROM delivery_attempts
                 WHERE notification_id = ? ORDER BY attempted_at, attempt""", (rs, i) -> {
            Map<String, Object> a = new LinkedHashMap<>();
            a.put("attempt", rs.getInt(1));
            int code = rs.getInt(2);
            a.put("status_code", rs.wasNull() ? null : code);
            a.put("error", rs.getString(3));
            a.put("duration_ms", rs.getInt(4));
            a.put("attempted_at", rs.getTimestamp(5).toInstant().toString());
            return a;
        }, id);
    }

    private static final RowMapper<Map<String, Object>> NOTIFICATION = (rs, i) -> {
        Map<String, Object> n = new LinkedHashMap<>();
        n.put("id", rs.getObject("id", UUID.class).toString());
        n.put("client_id", rs.getObject("client_id", UUID.class).toString());
        n.put("sensor_id", rs.getString("sensor_id"));
        n.put("type", rs.getString("type"));
        n.put("sequence", rs.getLong("sequence"));
        n.put("status", rs.getString("status"));
        n.put("attempts", rs.getInt("attempts"));
        n.put("next_attempt_at", "pending".equals(rs.getString("status")) ? time(rs, "next_attempt_at") : null);
        int code = rs.getInt("last_status");
        n.put("last_status", rs.wasNull() ? null : code);
        n.put("last_error", rs.getString("last_error"));
        UUID supersededBy = rs.getObject("superseded_by", UUID.class);
        n.put("superseded_by", supersededBy == null ? null : supersededBy.toString());
        n.put("superseded_reason", rs.getString("superseded_reason"));
        n.put("created_at", time(rs, "created_at"));
        n.put("finished_at", time(rs, "finished_at"));
        return n;
    };

    private static String time(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant().toString();
    }
}
