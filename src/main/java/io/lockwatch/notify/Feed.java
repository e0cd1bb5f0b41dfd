package io.lockwatch.notify;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A client's events in order after a cursor, read from its own rows of the outbox ({@code notifications}, V39): those
 * its filters took, of the sensors linked to it, and the escalation steps and clearings sent to it; a pull client's
 * rows are {@code pulled}, never posted. Each is the payload its webhook has (its id is the notification's), with the
 * event's id. Nothing is copied per poll: a read is an index range of the client's rows.
 *
 * <p>A place is {@code (feed_tx, event id)} (V36): a read serves only rows below the oldest transaction still running,
 * so nothing can later appear before a cursor already given. A cursor is {@code <feed_tx>.<id>}; it stays valid as
 * long as the rows after it are kept (the retention of finished notifications). A read that does not fill its page
 * moves the cursor up to that oldest running transaction: past every row already there, the client's or not.
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

        BadCursor(String cursor, String why) {
            super("cursor " + cursor + " is not one the feed gave: " + why);
        }
    }

    private final JdbcTemplate jdbc;
    /** The furthest end of the feed a read here has seen: no cursor this instance gave is past it. */
    private final java.util.concurrent.atomic.AtomicReference<FeedPlace> furthestSeen =
            new java.util.concurrent.atomic.AtomicReference<>(FeedPlace.START);

    public Feed(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    /** @param after a cursor from this feed, or null for the oldest row kept */
    public Page read(UUID clientId, String after, int limit) {
        FeedPlace from = after == null ? FeedPlace.START : FeedPlace.of(after);
        if (from == null) {
            throw new BadCursor(after);
        }
        String sql = """
                SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS below, x.*
                  FROM (SELECT 1) one LEFT JOIN LATERAL (
                    SELECT n.feed_tx::text::bigint AS feed_tx, n.event_id, n.id AS notification_id, e.sensor_id, s.address,
                           e.type, e.state, e.previous_state, e.sequence, e.occurred_at, e.maintenance, %s
                      FROM notifications n
                      JOIN sensor_events e ON e.id = n.event_id
                      LEFT JOIN alarms a ON a.id = e.alarm_id
                      LEFT JOIN sensors s ON s.id = e.sensor_id
                     WHERE n.client_id = ? AND n.feed_tx IS NOT NULL AND NOT n.replayed
                       AND (n.feed_tx, n.event_id) > (?::xid8, ?::bigint)
                       -- only what no running transaction can still come before (V36)
                       AND n.feed_tx < pg_snapshot_xmin(pg_current_snapshot())
                     ORDER BY n.feed_tx, n.event_id
                     LIMIT ?) x ON true""".formatted(NotificationStore.ALARM_COLUMNS);
        List<Map<String, Object>> items = new ArrayList<>();
        long[] below = new long[1];
        FeedPlace[] lastItem = new FeedPlace[1];
        jdbc.query(sql, rs -> {
            below[0] = rs.getLong("below");
            if (rs.getObject("event_id") != null) {
                items.add(item(rs, clientId));
                lastItem[0] = new FeedPlace(rs.getLong("feed_tx"), rs.getLong("event_id"));
            }
        }, clientId, String.valueOf(from.tx()), from.id(), limit);
        FeedPlace end = seen(FeedPlace.justBelow(below[0]));
        if (from.compareTo(end) > 0) {
            // no read gave it (every cursor given is at most the end then, and the end only moves on): a reader
            // holding it would wait past every event to come
            throw new BadCursor(after, "it is past the feed's end, " + end);
        }
        if (items.size() == limit) {
            return new Page(items, lastItem[0].toString(), true);
        }
        // every row below the oldest running transaction was looked at: on from there
        return new Page(items, from.later(FeedPlace.justBelow(below[0])).toString(), false);
    }

    /** Where the feed ends now: a cursor after which a client reads only what is recorded from now on. */
    public String head() {
        return seen(FeedPlace.justBelow(jdbc.queryForObject("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint",
                Long.class))).toString();
    }

    /**
     * Whether a cursor may be one this instance gave: not past the furthest end a read here has seen. One that is
     * past it is asked of the database (a read), which tells a cursor past the feed's end from one another instance
     * gave a moment ago.
     */
    boolean withinSeenEnd(FeedPlace place) {
        return place.compareTo(furthestSeen.get()) <= 0;
    }

    private FeedPlace seen(FeedPlace end) {
        return furthestSeen.accumulateAndGet(end, FeedPlace::later);
    }

    private static Map<String, Object> item(ResultSet rs, UUID clientId) throws SQLException {
        long event = rs.getLong("event_id");
        // the webhook's id: the notification's, the same at every read
        UUID id = rs.getObject("notification_id", UUID.class);
        Delivery d = new Delivery(id, clientId, null, null, null, true, rs.getString("sensor_id"), rs.getString("address"),
                rs.getString("type"), (Integer) rs.getObject("state", Integer.class),
                (Integer) rs.getObject("previous_state", Integer.class), rs.getLong("sequence"),
                rs.getTimestamp("occurred_at").getTime(), 0, NotificationStore.alarm(rs), null, 1, false,
                rs.getBoolean("maintenance"));
        Map<String, Object> payload = Notifications.payload(d);
        payload.put("event_id", event);
        return payload;
    }

}
