package io.lockwatch.notify;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The long polls of the pull feed waiting on this instance, by client, and the watch that wakes them. Every
 * {@code watch-interval} the watch reads the events recorded since its last look (on any instance: it reads the
 * database), notes for each client concerned the place of its newest one, and wakes that client's waiting reads.
 *
 * <p>So a read can be held without asking the database: a cursor at or after the place where the watch began, and no
 * event of the client's noted after it, means there is nothing to read yet. Deciding that and registering the read
 * happen under the lock the watch takes to note and wake, so no event falls between them. A cursor from before the
 * watch began is asked of the database ({@link #nothingToRead}). A waiting read holds no thread, only its place here;
 * the watch costs one query per interval, however many clients pull.
 */
public class FeedWatch {

    /** The most events a look reads; the rest are the next look's. */
    private static final int LOOK = 10_000;

    private final JdbcTemplate jdbc;
    private final Feed feed;
    private final Map<UUID, Long> known = new java.util.concurrent.ConcurrentHashMap<>();
    // all under this object's lock
    private final Map<UUID, Set<Runnable>> waiting = new HashMap<>();
    private final Map<UUID, FeedPlace> newest = new HashMap<>();
    private FeedPlace began;
    private FeedPlace watermark;

    public FeedWatch(JdbcTemplate jdbc, Feed feed) {
        this.jdbc = jdbc;
        this.feed = feed;
    }

    /**
     * Registers {@code wake} for the client's next event if the watch knows the read after this cursor would find
     * nothing; true if so. False: read now, or ask {@link #nothingToRead}.
     */
    public synchronized boolean holdIfNothingNew(UUID client, String after, Runnable wake) {
        FeedPlace from = FeedPlace.of(after);
        if (from == null || began == null || from.compareTo(began) < 0 || !feed.withinSeenEnd(from)) {
            return false; // a cursor past any end seen here may be past the feed's: the database says
        }
        FeedPlace last = newest.get(client);
        if (last != null && last.compareTo(from) > 0) {
            return false;
        }
        waiting.computeIfAbsent(client, c -> new HashSet<>()).add(wake);
        return true;
    }

    /**
     * Asked of the database: whether a read of the client's feed after this cursor would find nothing now (a client
     * that exists, a cursor that is the feed's, and no row of the client's after it).
     */
    public boolean nothingToRead(UUID client, String after) {
        if (!exists(client)) {
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
     * Whether the client exists; a yes is remembered for a minute, so that a client polling again and again is asked
     * after once a minute, not at every poll (one deleted meanwhile has its poll held, then answered 404).
     */
    public boolean exists(UUID client) {
        long now = System.nanoTime();
        Long until = known.get(client);
        if (until != null && until - now > 0) {
            return true;
        }
        boolean exists = Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM clients WHERE id = ?)",
                Boolean.class, client));
        if (exists) {
            if (known.size() > 100_000) {
                known.clear();
            }
            known.put(client, now + java.util.concurrent.TimeUnit.MINUTES.toNanos(1));
        }
        return exists;
    }

    /**
     * Holds {@code wake} until an event of the client is noted. Register first, then ask {@link #nothingToRead}: what
     * is recorded in between is after the watch's mark, and wakes it.
     */
    public synchronized void await(UUID client, Runnable wake) {
        waiting.computeIfAbsent(client, c -> new HashSet<>()).add(wake);
    }

    public synchronized void cancel(UUID client, Runnable wake) {
        Set<Runnable> wakes = waiting.get(client);
        if (wakes != null && wakes.remove(wake) && wakes.isEmpty()) {
            waiting.remove(client);
        }
    }

    /** Takes every waiting long poll off the watch, to be answered now (the service is stopping). */
    public synchronized List<Runnable> releaseAll() {
        List<Runnable> all = new ArrayList<>();
        waiting.values().forEach(all::addAll);
        waiting.clear();
        return all;
    }

    /** Long polls waiting on this instance now. */
    public synchronized int waiting() {
        return waiting.values().stream().mapToInt(Set::size).sum();
    }

    /** Looks at what was recorded since the last look, notes it by client and wakes the reads it concerns; how many. */
    public int wake() {
        FeedPlace from;
        synchronized (this) {
            if (watermark == null) {
                watermark = FeedPlace.of(feed.head());
                began = watermark;
                return 0;
            }
            from = watermark;
        }
        // The look holds no lock: a poll held meanwhile waits behind it otherwise (45 ms at a time in the feed
        // benchmark). One held while it runs is registered before what the look found is noted, so it is woken below
        // if that concerns it. Looks do not overlap: one timer calls this.
        List<Object[]> touched = jdbc.query("""
                WITH fresh AS MATERIALIZED (
                    SELECT e.feed_tx, e.id, e.sensor_id FROM sensor_events e
                     WHERE (e.feed_tx, e.id) > (?::xid8, ?::bigint)
                       AND e.feed_tx < pg_snapshot_xmin(pg_current_snapshot())
                     ORDER BY e.feed_tx, e.id
                     LIMIT ?),
                last AS (SELECT feed_tx, id FROM fresh ORDER BY feed_tx DESC, id DESC LIMIT 1),
                concerned AS (
                    SELECT cs.client_id, f.feed_tx, f.id FROM fresh f JOIN client_sensors cs ON cs.sensor_id = f.sensor_id
                    UNION ALL
                    SELECT ae.client_id, f.feed_tx, f.id FROM fresh f JOIN alarm_escalations ae ON ae.event_id = f.id)
                SELECT NULL::uuid, feed_tx::text, id FROM last
                UNION ALL
                SELECT client_id, feed_tx::text, id
                  FROM (SELECT DISTINCT ON (client_id) client_id, feed_tx, id FROM concerned
                         ORDER BY client_id, feed_tx DESC, id DESC) newest""",
                (rs, i) -> new Object[] {rs.getObject(1, UUID.class), new FeedPlace(Long.parseLong(rs.getString(2)),
                        rs.getLong(3))},
                String.valueOf(from.tx()), from.id(), LOOK);
        List<Runnable> woken = new ArrayList<>();
        synchronized (this) {
            for (Object[] row : touched) {
                if (row[0] == null) {
                    watermark = (FeedPlace) row[1];
                    continue;
                }
                UUID client = (UUID) row[0];
                newest.put(client, (FeedPlace) row[1]);
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
