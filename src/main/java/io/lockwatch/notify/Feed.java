package io.lockwatch.notify;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A client's events in order after a cursor, read from {@code sensor_events} itself (V36): those of the sensors linked
 * to it now that its event types and severities ask for, and the escalation steps sent to it. Each is the payload its
 * webhook has, with the event's id. A cursor is the place of the last event read, {@code <feed_tx>.<id>}: it stays
 * valid as long as the events after it are kept (the retention of history). Nothing is copied per poll.
 *
 * <p>A read looks at no more than {@code scanBound} events of all clients after the cursor: a client of a few doors
 * coming back after a day does not make one request scan the whole day. Its next cursor then is where the scan ended,
 * with {@code more} true, however few of the events were its own.
 */
public class Feed {

    /** A page of the feed: its events, the cursor to read on from, and whether more are there already. */
    @com.fasterxml.jackson.databind.annotation.JsonNaming(com.fasterxml.jackson.databind.PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Page(List<Map<String, Object>> items, String nextCursor, boolean more) {
    }

    /** Thrown for a cursor that is not one this feed gave. */
    public static class BadCursor extends RuntimeException {
        BadCursor(String cursor) {
            super("cursor " + cursor + " is not one the feed gave");
        }
    }

    private static final String START = "0.0";

    private final JdbcTemplate jdbc;
    private final int scanBound;

    public Feed(JdbcTemplate jdbc, int scanBound) {
        this.jdbc = jdbc;
        this.scanBound = scanBound;
    }

    /** @param after a cursor from this feed, or null for the oldest event kept */
    public Page read(UUID clientId, String after, int limit) {
        Object[] place = place(after == null ? START : after);
        String sql = """
                WITH scanned AS MATERIALIZED (
                    SELECT e.feed_tx, e.id FROM sensor_events e
                     WHERE (e.feed_tx, e.id) > (?::xid8, ?::bigint)
                       -- only what no running transaction can still come before (V36)
                       AND e.feed_tx < pg_snapshot_xmin(pg_current_snapshot())
                     ORDER BY e.feed_tx, e.id
                     LIMIT ?),
                last AS (SELECT feed_tx, id, (SELECT count(*) FROM scanned) AS n FROM scanned
                          ORDER BY feed_tx DESC, id DESC LIMIT 1),
                mine AS (
                    SELECT s.feed_tx, s.id FROM scanned s
                      JOIN sensor_events e ON e.id = s.id
                      JOIN clients cl ON cl.id = ?
                     WHERE e.type <> 'sensor.alarm_escalated'
                           AND EXISTS (SELECT 1 FROM client_sensors cs
                                        WHERE cs.client_id = cl.id AND cs.sensor_id = e.sensor_id)
                           AND (cl.event_types IS NULL OR e.type = ANY (cl.event_types))
                           AND (cl.alarm_severities IS NULL OR e.alarm_id IS NULL
                                OR (SELECT a.severity FROM alarms a WHERE a.id = e.alarm_id) = ANY (cl.alarm_severities))
                        OR e.type = 'sensor.alarm_escalated'
                           AND EXISTS (SELECT 1 FROM alarm_escalations ae WHERE ae.client_id = cl.id AND ae.event_id = e.id)
                     ORDER BY s.feed_tx, s.id
                     LIMIT ?)
                SELECT l.feed_tx::text AS scanned_tx, l.id AS scanned_id, l.n AS scanned, x.*
                  FROM last l LEFT JOIN LATERAL (
                    SELECT m.feed_tx::text AS feed_tx, e.id AS event_id, n.id AS notification_id, e.sensor_id, s.address,
                           e.type, e.state, e.previous_state, e.sequence, e.occurred_at, e.maintenance, %s
                      FROM mine m
                      JOIN sensor_events e ON e.id = m.id
                      LEFT JOIN alarms a ON a.id = e.alarm_id
                      LEFT JOIN sensors s ON s.id = e.sensor_id
                      LEFT JOIN notifications n ON n.event_id = e.id AND n.client_id = ?) x ON true
                 ORDER BY x.feed_tx::xid8, x.event_id""".formatted(NotificationStore.ALARM_COLUMNS);
        List<Map<String, Object>> items = new ArrayList<>();
        String[] scannedTo = new String[2];
        long[] scanned = new long[1];
        String[] lastItem = new String[1];
        jdbc.query(sql, rs -> {
            scannedTo[0] = rs.getString("scanned_tx");
            scannedTo[1] = rs.getString("scanned_id");
            scanned[0] = rs.getLong("scanned");
            if (rs.getObject("event_id") != null) {
                items.add(item(rs, clientId));
                lastItem[0] = rs.getString("feed_tx") + "." + rs.getLong("event_id");
            }
        }, place[0], place[1], scanBound, clientId, limit, clientId);
        if (scannedTo[0] == null) {
            return new Page(items, after == null ? START : after, false); // nothing new at all
        }
        if (items.size() == limit) {
            return new Page(items, lastItem[0], true);
        }
        // every event scanned was looked at: read on from the end of the scan
        return new Page(items, scannedTo[0] + "." + scannedTo[1], scanned[0] == scanBound);
    }

    private static Map<String, Object> item(ResultSet rs, UUID clientId) throws SQLException {
        long event = rs.getLong("event_id");
        UUID notification = rs.getObject("notification_id", UUID.class);
        // the webhook's id when the event was posted to the client too; else one that is the same at every read
        UUID id = notification != null ? notification
                : UUID.nameUUIDFromBytes(("lockwatch feed " + event + " " + clientId).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        Delivery d = new Delivery(id, clientId, null, null, null, true, rs.getString("sensor_id"), rs.getString("address"),
                rs.getString("type"), (Integer) rs.getObject("state", Integer.class),
                (Integer) rs.getObject("previous_state", Integer.class), rs.getLong("sequence"),
                rs.getTimestamp("occurred_at").getTime(), 0, NotificationStore.alarm(rs), null, 1, false,
                rs.getBoolean("maintenance"));
        Map<String, Object> payload = Notifications.payload(d);
        payload.put("event_id", event);
        return payload;
    }

    /** Where the feed ends now: a cursor after which a client reads only what is recorded from now on. */
    public String head() {
        List<String> last = jdbc.queryForList("""
                SELECT feed_tx::text || '.' || id FROM sensor_events
                 WHERE feed_tx < pg_snapshot_xmin(pg_current_snapshot())
                 ORDER BY feed_tx DESC, id DESC LIMIT 1""", String.class);
        return last.isEmpty() ? START : last.get(0);
    }

    /** A cursor's transaction id (as text, for the cast to xid8) and event id; else {@link BadCursor}. */
    private static Object[] place(String cursor) {
        int dot = cursor.indexOf('.');
        if (dot > 0 && cursor.length() <= 42 && cursor.substring(0, dot).chars().allMatch(Character::isDigit)
                && cursor.substring(dot + 1).chars().allMatch(Character::isDigit)) {
            try {
                String tx = new java.math.BigInteger(cursor.substring(0, dot)).toString();
                if (tx.length() <= 20) {
                    return new Object[] {tx, Long.parseLong(cursor.substring(dot + 1))};
                }
            } catch (NumberFormatException e) {
                // not a number a cursor holds: refused below
            }
        }
        throw new BadCursor(cursor);
    }
}
