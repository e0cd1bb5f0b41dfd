package io.lockwatch.maintenance;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;

/** Maintenance windows as the API shows them: planned, listed, ended early, cancelled before they start. */
public class MaintenanceWindows {

    /**
     * A window: {@code scheduled} (not started), {@code open}, {@code ended} (by its end or early; {@code releasedAt}
     * once what it held was sent) or {@code cancelled}; {@code held}: what it holds now (lost sensors, alarms).
     */
    public record Window(UUID id, String state, Instant startsAt, Instant endsAt, String reason, List<String> sensorIds,
                         String addressPrefix, Instant endedAt, Instant cancelledAt, Instant releasedAt, int held,
                         Instant createdAt) {
    }

    /** Thrown for a window given sensor ids that are not registered: the first few of them. */
    public static class UnknownSensors extends RuntimeException {
        public UnknownSensors(List<String> sensors) {
            super("not registered: " + String.join(", ", sensors));
        }
    }

    /** What ending or cancelling found. */
    public enum Change { DONE, NOT_FOUND, NOT_OPEN, STARTED }

    private static final String VIEW = """
            SELECT w.*, (SELECT count(*) FROM maintenance_held h WHERE h.window_id = w.id) AS held,
                   CASE WHEN w.cancelled_at IS NOT NULL THEN 'cancelled'
                        WHEN now() < w.starts_at THEN 'scheduled'
                        WHEN now() < coalesce(w.ended_at, w.ends_at) THEN 'open'
                        ELSE 'ended' END AS state
              FROM maintenance_windows w
            """;

    private final JdbcTemplate jdbc;
    private final org.springframework.transaction.support.TransactionTemplate tx;

    public MaintenanceWindows(JdbcTemplate jdbc, org.springframework.transaction.support.TransactionTemplate tx) {
        this.jdbc = jdbc;
        this.tx = tx;
    }

    /** @param startsAt null: now */
    public Window create(Instant startsAt, Instant endsAt, String reason, List<String> sensorIds, String addressPrefix) {
        if (sensorIds != null) {
            List<String> unknown = jdbc.queryForList("""
                    SELECT id FROM unnest(?::text[]) WITH ORDINALITY AS given (id, n)
                     WHERE NOT EXISTS (SELECT 1 FROM sensors s WHERE s.id = given.id) ORDER BY n LIMIT 10""",
                    String.class, (Object) sensorIds.toArray(String[]::new));
            if (!unknown.isEmpty()) {
                throw new UnknownSensors(unknown);
            }
        }
        UUID id = tx.execute(status -> {
            UUID created = jdbc.queryForObject("""
                    INSERT INTO maintenance_windows (starts_at, ends_at, reason, sensor_ids, address_prefix)
                    VALUES (coalesce(?, now()), ?, ?, ?::varchar[], ?) RETURNING id""", UUID.class,
                    startsAt == null ? null : Timestamp.from(startsAt), Timestamp.from(endsAt), reason,
                    sensorIds == null ? null : sensorIds.toArray(String[]::new), addressPrefix);
            if (sensorIds != null) {
                // looked up by sensor for each event recorded while the window is open (V33)
                jdbc.update("""
                        INSERT INTO maintenance_window_sensors (window_id, sensor_id)
                        SELECT ?, unnest(?::varchar[]) ON CONFLICT DO NOTHING""", created,
                        (Object) sensorIds.toArray(String[]::new));
            }
            return created;
        });
        return find(id);
    }

    public Window find(UUID id) {
        List<Window> found = jdbc.query(VIEW + " WHERE w.id = ?", WINDOW, id);
        return found.isEmpty() ? null : found.get(0);
    }

    /** The latest windows by their start, newest first: those not ended yet, or all. */
    public List<Window> list(boolean current, int limit) {
        return jdbc.query(VIEW + """
                 WHERE NOT ? OR (w.cancelled_at IS NULL AND coalesce(w.ended_at, w.ends_at) > now())
                 ORDER BY w.starts_at DESC, w.id LIMIT ?""", WINDOW, current, limit);
    }

    /** Ends an open window now: what it holds is released by the next scan. */
    public Change end(UUID id) {
        if (find(id) == null) {
            return Change.NOT_FOUND;
        }
        return jdbc.update("""
                UPDATE maintenance_windows SET ended_at = now()
                 WHERE id = ? AND cancelled_at IS NULL AND starts_at <= now() AND coalesce(ended_at, ends_at) > now()""",
                id) > 0 ? Change.DONE : Change.NOT_OPEN;
    }

    /** Cancels a window that has not started; one that has is ended instead. */
    public Change cancel(UUID id) {
        if (find(id) == null) {
            return Change.NOT_FOUND;
        }
        return jdbc.update("""
                UPDATE maintenance_windows SET cancelled_at = now()
                 WHERE id = ? AND cancelled_at IS NULL AND starts_at > now()""", id) > 0 ? Change.DONE : Change.STARTED;
    }

    private static final RowMapper<Window> WINDOW = (rs, i) -> {
        java.sql.Array ids = rs.getArray("sensor_ids");
        return new Window(rs.getObject("id", UUID.class), rs.getString("state"), time(rs, "starts_at"), time(rs, "ends_at"),
                rs.getString("reason"), ids == null ? null : List.of((String[]) ids.getArray()), rs.getString("address_prefix"),
                time(rs, "ended_at"), time(rs, "cancelled_at"), time(rs, "released_at"), rs.getInt("held"),
                time(rs, "created_at"));
    };

    private static Instant time(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
