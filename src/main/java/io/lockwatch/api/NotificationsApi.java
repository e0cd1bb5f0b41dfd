package io.lockwatch.api;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.lockwatch.ingest.ReadingParser;
import io.lockwatch.notify.ClaimWakeUp;
import org.apache.camel.Exchange;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/** Notifications: list and inspect them, and put dead ones back for delivery. */
public class NotificationsApi {

    private static final List<String> STATUSES = List.of("pending", "delivering", "delivered", "dead", "superseded", "cancelled");
    private static final String VIEW = """
            SELECT id, client_id, sensor_id, type, sequence, status, attempts, next_attempt_at, last_status, last_error,
                   superseded_by, superseded_reason, created_at, finished_at
              FROM notifications
            """;

    private final JdbcTemplate jdbc;
    private final ClaimWakeUp claims;

    public NotificationsApi(JdbcTemplate jdbc, ClaimWakeUp claims) {
        this.jdbc = jdbc;
        this.claims = claims;
    }

    public void list(Exchange exchange) {
        int limit = Json.limit(exchange);
        String client = Json.header(exchange, "client_id");
        UUID clientId = null;
        if (client != null) {
            try {
                clientId = UUID.fromString(client);
            } catch (IllegalArgumentException e) {
                throw ApiProblem.badRequest("client_id", "client_id must be a UUID");
            }
        }
        String sensor = Json.header(exchange, "sensor_id");
        if (sensor != null && !ReadingParser.SENSOR_ID.matcher(sensor).matches()) {
            throw ApiProblem.badRequest("sensor_id", "sensor_id must be 1 to 16 letters and digits");
        }
        String status = Json.header(exchange, "status");
        if (status != null && !STATUSES.contains(status)) {
            throw ApiProblem.badRequest("status", "status must be one of " + String.join(", ", STATUSES));
        }
        String[] after = Json.timeCursor(Json.header(exchange, "cursor"));
        List<Map<String, Object>> rows = jdbc.query(VIEW + """
                 WHERE (?::uuid IS NULL OR client_id = ?) AND (?::text IS NULL OR sensor_id = ?)
                   AND (?::text IS NULL OR status = ?)
                   AND (?::timestamptz IS NULL OR (created_at, id) < (?::timestamptz, ?::uuid))
                 ORDER BY created_at DESC, id DESC
                 LIMIT ?""", NOTIFICATION, clientId, clientId, sensor, sensor, status, status,
                after == null ? null : after[0], after == null ? null : after[0], after == null ? null : after[1], limit + 1);
        Json.respond(exchange, 200, Json.pageByTime(rows, limit, "created_at"));
    }

    public void get(Exchange exchange) {
        UUID id = Json.uuid(exchange, "notificationId", "notification");
        Map<String, Object> n = find(id);
        n.put("attempts_made", jdbc.query("""
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
        }, id));
        Json.respond(exchange, 200, n);
    }

    /** A dead or cancelled notification is due again, from its first attempt, with the same webhook-id. */
    public void redeliver(Exchange exchange) {
        UUID id = Json.uuid(exchange, "notificationId", "notification");
        Map<String, Object> n = find(id);
        int updated = jdbc.update("""
                UPDATE notifications SET status = 'pending', attempts = 0, next_attempt_at = now(), finished_at = NULL,
                       lease_until = NULL
                 WHERE id = ? AND status IN ('dead', 'cancelled')""", id);
        if (updated == 0) {
            throw ApiProblem.conflict("notification " + id + " is " + n.get("status") + "; only dead or cancelled ones are redelivered");
        }
        claims.wakeUp();
        Json.respond(exchange, 202, find(id));
    }

    /** Every dead notification of a client is due again. */
    public void redeliverDead(Exchange exchange) {
        UUID client = ClientsApi.clientId(exchange);
        Integer exists = jdbc.queryForObject("SELECT count(*) FROM clients WHERE id = ?", Integer.class, client);
        if (exists == null || exists == 0) {
            throw ApiProblem.notFound("client " + client);
        }
        int updated = jdbc.update("""
                UPDATE notifications SET status = 'pending', attempts = 0, next_attempt_at = now(), finished_at = NULL,
                       lease_until = NULL
                 WHERE client_id = ? AND status = 'dead'""", client);
        if (updated > 0) {
            claims.wakeUp();
        }
        Json.respond(exchange, 200, Map.of("redelivered", updated));
    }

    private Map<String, Object> find(UUID id) {
        List<Map<String, Object>> found = jdbc.query(VIEW + " WHERE id = ?", NOTIFICATION, id);
        if (found.isEmpty()) {
            throw ApiProblem.notFound("notification " + id);
        }
        return found.get(0);
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
        var t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant().toString();
    }
}
