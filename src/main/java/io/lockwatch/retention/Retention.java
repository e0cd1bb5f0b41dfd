package io.lockwatch.retention;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.sql.Timestamp;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Removes what is older than its retention, in batches, each a short statement of its own: no long lock, and a
 * table's dead rows are a batch at a time for autovacuum, not a table's worth at once.
 * <ul>
 *   <li>finished notifications (delivered, dead, superseded, cancelled) that finished before
 *       {@code lockwatch.notify.retention}, with their delivery attempts. Pending and delivering ones never;</li>
 *   <li>events recorded before {@code lockwatch.history.retention} that no notification still names;</li>
 *   <li>PostgreSQL's history of readings received before it;</li>
 *   <li>with ClickHouse, its months wholly before it ({@link OldHistory});</li>
 *   <li>entries of the audit log recorded before {@code lockwatch.audit.retention} (400 days).</li>
 * </ul>
 * With ClickHouse, events and attempts not yet exported to it are kept until they are.
 * <p>
 * After each full batch it pauses {@code pause-factor} times as long as that batch took, so a backlog of old rows (the
 * first pass on a database of years) keeps PostgreSQL busy at most 1 / (1 + factor) of the time. That lowers live
 * traffic's p95 during such a backlog, not its p99, which is each batch's own statement (docs/BENCHMARKS.md,
 * "Retention under load").
 */
public class Retention {

    /** How the pass rests between batches: {@code nanos} to wait, or an interruption that ends the pass. */
    public interface Pause {
        void rest(long nanos) throws InterruptedException;

        Pause SLEEP = java.util.concurrent.TimeUnit.NANOSECONDS::sleep;
    }

    /** ClickHouse's history older than a time, or nothing when history is in PostgreSQL. */
    public interface OldHistory {
        void removeBefore(Instant horizon);
    }

    /** The audit log's entries recorded before a time, up to a batch of them, removed; @return how many. */
    public interface OldAudit {
        int removeBefore(Instant horizon, int batch);
    }

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Retention.class);

    private final JdbcTemplate jdbc;
    private final Duration notifications;
    private final Duration history;
    private final int batch;
    private final OldHistory clickHouse;
    private final Clock clock;
    private final MeterRegistry meters;
    private final double pauseFactor;
    private final Pause pause;
    private final OldAudit audit;
    private final Duration auditKept;

    /**
     * @param clickHouse  null: history is in PostgreSQL, where nothing waits to be exported
     * @param pauseFactor after each full batch, a rest of this many times its duration (0: none)
     */
    public Retention(JdbcTemplate jdbc, Duration notifications, Duration history, int batch, OldHistory clickHouse,
                     Clock clock, MeterRegistry meters, double pauseFactor, Pause pause) {
        this(jdbc, notifications, history, batch, clickHouse, clock, meters, pauseFactor, pause, null, null);
    }

    /** @param audit null: the audit log is not trimmed here */
    public Retention(JdbcTemplate jdbc, Duration notifications, Duration history, int batch, OldHistory clickHouse,
                     Clock clock, MeterRegistry meters, double pauseFactor, Pause pause, OldAudit audit, Duration auditKept) {
        this.audit = audit;
        this.auditKept = auditKept;
        this.pauseFactor = pauseFactor;
        this.pause = pause;
        this.jdbc = jdbc;
        this.notifications = notifications;
        this.history = history;
        this.batch = batch;
        this.clickHouse = clickHouse;
        this.clock = clock;
        this.meters = meters;
    }

    /** What is kept: finished notifications for this long, history for that long. */
    public Duration notificationsKept() {
        return notifications;
    }

    public Duration historyKept() {
        return history;
    }

    /** One pass over every kind; @return rows removed */
    public long removeOld() {
        Instant now = clock.instant();
        Timestamp finishedBefore = Timestamp.from(now.minus(notifications));
        Timestamp recordedBefore = Timestamp.from(now.minus(history));
        boolean exportFirst = clickHouse != null;
        long removed = 0;
        long[] attempts = {0};
        removed += inBatches("notifications", () -> {
            int[] gone = jdbc.queryForObject("""
                    WITH old AS (
                        SELECT n.id FROM notifications n
                         WHERE n.status IN ('delivered', 'dead', 'superseded', 'cancelled', 'pulled') AND n.finished_at < ?
                           AND (NOT ? OR NOT EXISTS (SELECT 1 FROM delivery_attempts a
                                                      WHERE a.notification_id = n.id AND NOT a.exported))
                         ORDER BY n.finished_at LIMIT ?
                           FOR UPDATE SKIP LOCKED),
                    attempts AS (DELETE FROM delivery_attempts a USING old WHERE a.notification_id = old.id RETURNING 1),
                    gone AS (DELETE FROM notifications n USING old WHERE n.id = old.id RETURNING 1)
                    SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM attempts)""",
                    (rs, i) -> new int[] {rs.getInt(1), rs.getInt(2)}, finishedBefore, exportFirst, batch);
            attempts[0] += gone[1];
            return gone[0];
        });
        if (attempts[0] > 0) {
            meters.counter("lockwatch.retention.removed", "kind", "delivery_attempts").increment(attempts[0]);
        }
        removed += attempts[0];
        removed += inBatches("events", () -> jdbc.update("""
                DELETE FROM sensor_events e WHERE e.id IN (
                    SELECT x.id FROM sensor_events x
                     WHERE x.recorded_at < ? AND (NOT ? OR x.exported)
                       AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.event_id = x.id)
                     ORDER BY x.id LIMIT ?
                       FOR UPDATE SKIP LOCKED)""", recordedBefore, exportFirst, batch));
        removed += inBatches("readings", () -> jdbc.update("""
                DELETE FROM reading_history r WHERE r.reading_id IN (
                    SELECT x.reading_id FROM reading_history x WHERE x.received_at < ?
                     ORDER BY x.received_at LIMIT ?
                       FOR UPDATE SKIP LOCKED)""", recordedBefore, batch));
        if (clickHouse != null) {
            clickHouse.removeBefore(now.minus(history));
        }
        if (audit != null) {
            Instant auditBefore = now.minus(auditKept);
            removed += inBatches("audit", () -> audit.removeBefore(auditBefore, batch));
        }
        return removed;
    }

    /** Batch after batch until one finds fewer rows than a batch, resting between them; each counted. */
    private long inBatches(String kind, java.util.function.IntSupplier oneBatch) {
        long total = 0;
        int n;
        do {
            long began = System.nanoTime();
            n = oneBatch.getAsInt();
            total += n;
            if (n >= batch && pauseFactor > 0) {
                try {
                    pause.rest((long) ((System.nanoTime() - began) * pauseFactor));
                } catch (InterruptedException e) {
                    // stopping: the next pass takes up the rest
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        } while (n >= batch);
        if (total > 0) {
            meters.counter("lockwatch.retention.removed", "kind", kind).increment(total);
            log.info("Retention: {} old {} rows removed", total, kind);
        }
        return total;
    }
}
