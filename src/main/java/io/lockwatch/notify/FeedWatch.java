package io.lockwatch.notify;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The long polls of the pull feed waiting on this instance, each by its client, and the watch that wakes them: every
 * {@code watch-interval} it reads the events recorded since its last look (on any instance: it reads the database)
 * and wakes the waiting reads of the clients they concern. A waiting read holds no thread, only its place here; the
 * watch costs one query per interval, however many wait, and none while nobody does.
 */
public class FeedWatch {

    /** The most events a look reads: after an outage of the watch, the clients of the rest are woken next time. */
    private static final int LOOK = 10_000;

    private final JdbcTemplate jdbc;
    private final Feed feed;
    private final Map<UUID, Set<Runnable>> waiting = new ConcurrentHashMap<>();
    /** Where the last look ended; null while nobody waits. */
    private String watermark;

    public FeedWatch(JdbcTemplate jdbc, Feed feed) {
        this.jdbc = jdbc;
        this.feed = feed;
    }

    /**
     * Whether a read of the client's feed after this cursor would find nothing now: a client that exists, a cursor
     * that is the feed's, and no event of the client's after it (nor a full scan to move on from).
     */
    public boolean nothingToRead(UUID client, String after) {
        if (!Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM clients WHERE id = ?)", Boolean.class,
                client))) {
            return false;
        }
        try {
            Feed.Page page = feed.read(client, after, 1);
            return page.items().isEmpty() && !page.more();
        } catch (Feed.BadCursor e) {
            return false;
        }
    }

    /**
     * Holds {@code wake} until an event of the client is recorded. Register first, then look
     * ({@link #nothingToRead}): what is recorded in between is after the watch's mark, and wakes it.
     */
    public synchronized void await(UUID client, Runnable wake) {
        waiting.computeIfAbsent(client, c -> ConcurrentHashMap.newKeySet()).add(wake);
        if (watermark == null) {
            watermark = feed.head();
        }
    }

    public void cancel(UUID client, Runnable wake) {
        waiting.computeIfPresent(client, (c, wakes) -> {
            wakes.remove(wake);
            return wakes.isEmpty() ? null : wakes;
        });
    }

    /** Long polls waiting on this instance now. */
    public int waiting() {
        return waiting.values().stream().mapToInt(Set::size).sum();
    }

    /** Looks at what was recorded since the last look and wakes the waiting reads it concerns; how many. */
    public int wake() {
        List<Runnable> woken = new ArrayList<>();
        synchronized (this) {
            if (waiting.isEmpty()) {
                watermark = null;
                return 0;
            }
            int dot = watermark.indexOf('.');
            UUID[] clients = waiting.keySet().toArray(UUID[]::new);
            List<Object[]> look = jdbc.query("""
                    WITH fresh AS MATERIALIZED (
                        SELECT e.feed_tx, e.id, e.sensor_id FROM sensor_events e
                         WHERE (e.feed_tx, e.id) > (?::xid8, ?::bigint)
                           AND e.feed_tx < pg_snapshot_xmin(pg_current_snapshot())
                         ORDER BY e.feed_tx, e.id
                         LIMIT ?)
                    SELECT (SELECT feed_tx::text || '.' || id FROM fresh ORDER BY feed_tx DESC, id DESC LIMIT 1),
                           ARRAY(SELECT cs.client_id FROM client_sensors cs
                                  WHERE cs.client_id = ANY (?::uuid[])
                                    AND cs.sensor_id IN (SELECT sensor_id FROM fresh)
                                 UNION
                                 SELECT ae.client_id FROM alarm_escalations ae
                                  WHERE ae.client_id = ANY (?::uuid[]) AND ae.event_id IN (SELECT id FROM fresh))""",
                    (rs, i) -> new Object[] {rs.getString(1), rs.getArray(2).getArray()},
                    watermark.substring(0, dot), Long.parseLong(watermark.substring(dot + 1)), LOOK, clients, clients);
            if (look.get(0)[0] == null) {
                return 0;
            }
            watermark = (String) look.get(0)[0];
            for (UUID client : (UUID[]) look.get(0)[1]) {
                Set<Runnable> wakes = waiting.remove(client);
                if (wakes != null) {
                    woken.addAll(wakes);
                }
            }
        }
        woken.forEach(Runnable::run);
        return woken.size();
    }
}
