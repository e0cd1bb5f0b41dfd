package io.lockwatch.audit;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/**
 * The audit log in PostgreSQL: appended to, read back by actor, resource, operation, outcome and time, and trimmed
 * by retention. Nothing here updates a row (the table's trigger refuses it) or deletes one younger than the
 * retention.
 */
public class AuditLog {

    /** One change, or one attempt at one. {@code details} is JSON, its secrets already redacted. */
    @com.fasterxml.jackson.databind.annotation.JsonNaming(com.fasterxml.jackson.databind.PropertyNamingStrategies.SnakeCaseStrategy.class)
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
    public record Entry(UUID id, Instant at, String actor, String actorKind, String actorSubject, UUID actorClient, String operation,
                        String method, String resource,
                        @com.fasterxml.jackson.annotation.JsonRawValue String details, Integer status, String outcome,
                        String address, String userAgent, String correlationId) {
    }

    /** What a reader asks for; null fields do not narrow. {@code resource} matches itself and what is under it. */
    public record Query(String actor, String resource, String operation, String outcome, Instant from, Instant to) {
    }

    private static final RowMapper<Entry> ENTRY = AuditLog::entry;
    private static final String COLUMNS = "id, at, actor, actor_kind, actor_subject, actor_client, operation, method, resource, "
            + "details::text, status, outcome, address, user_agent, correlation_id";

    private final JdbcTemplate jdbc;

    public AuditLog(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    void append(Entry e) {
        jdbc.update("INSERT INTO audit_log (" + COLUMNS.replace("::text", "") + ") "
                        + "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?)",
                e.id(), Timestamp.from(e.at()), e.actor(), e.actorKind(), e.actorSubject(), e.actorClient(), e.operation(), e.method(),
                e.resource(), e.details(), e.status(), e.outcome(), e.address(), e.userAgent(), e.correlationId());
    }

    /** Newest first, {@code limit} of them after the cursor's (time, id), if one is given. */
    public List<Entry> find(Query q, Instant afterAt, UUID afterId, int limit) {
        return jdbc.query("SELECT " + COLUMNS + " " + """
                 FROM audit_log
                 WHERE (?::text IS NULL OR actor = ?)
                   AND (?::text IS NULL OR resource = ? OR resource LIKE ? ESCAPE '\\')
                   AND (?::text IS NULL OR operation = ?)
                   AND (?::text IS NULL OR outcome = ?)
                   AND at >= ? AND at < ?
                   AND (?::timestamptz IS NULL OR (at, id) < (?::timestamptz, ?::uuid))
                 ORDER BY at DESC, id DESC
                 LIMIT ?""", ENTRY,
                q.actor(), q.actor(), q.resource(), q.resource(), q.resource() == null ? null : under(q.resource()),
                q.operation(), q.operation(), q.outcome(), q.outcome(), Timestamp.from(q.from()), Timestamp.from(q.to()),
                afterAt == null ? null : Timestamp.from(afterAt), afterAt == null ? null : Timestamp.from(afterAt),
                afterId, limit);
    }

    /** Removes up to {@code batch} entries older than {@code before}, oldest first; @return how many */
    public int removeBefore(Instant before, int batch) {
        return jdbc.update("""
                DELETE FROM audit_log WHERE id IN (
                    SELECT id FROM audit_log WHERE at < ? ORDER BY at LIMIT ? FOR UPDATE SKIP LOCKED)""",
                Timestamp.from(before), batch);
    }

    /** A LIKE pattern for what lies under a resource: {@code clients/x} finds {@code clients/x/keys/y}. */
    private static String under(String resource) {
        return resource.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "/%";
    }

    private static Entry entry(ResultSet rs, int i) throws SQLException {
        int status = rs.getInt("status");
        Integer statusOrNull = rs.wasNull() ? null : status;
        return new Entry(rs.getObject("id", UUID.class), rs.getTimestamp("at").toInstant(), rs.getString("actor"),
                rs.getString("actor_kind"), rs.getString("actor_subject"), rs.getObject("actor_client", UUID.class), rs.getString("operation"),
                rs.getString("method"), rs.getString("resource"), rs.getString("details"),
                statusOrNull, rs.getString("outcome"), rs.getString("address"), rs.getString("user_agent"),
                rs.getString("correlation_id"));
    }
}
