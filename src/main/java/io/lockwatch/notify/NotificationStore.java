package io.lockwatch.notify;

import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import io.lockwatch.secrets.SecretCipher;
import org.springframework.jdbc.core.ConnectionCallback;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The outbox's side of delivery. A claim moves due notifications to {@code delivering} with a lease, in one
 * statement with {@code FOR UPDATE SKIP LOCKED}, so that with any number of instances each attempt is made by
 * exactly one of them; a lease that runs out (a crashed instance) makes its notification due again.
 */
public class NotificationStore {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(NotificationStore.class);

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final SecretCipher cipher;

    public NotificationStore(JdbcTemplate jdbc, TransactionTemplate tx, SecretCipher cipher) {
        this.jdbc = jdbc;
        this.tx = tx;
        this.cipher = cipher;
    }

    /**
     * Claims due notifications for the lanes that have room, up to each lane's room of requests and {@code total}
     * requests in all, in one statement (a request carries one notification; of a client that batches, up to its
     * {@code max_events_per_request}, see {@link Dispatch}): each lane's due notifications are its ranges of
     * {@code notifications_due_live_first}, live then replayed, each taken oldest due first, and where {@code total}
     * does not reach every lane's room they are shared out in turns by what each lane will have in flight (a lane
     * with none first, then every lane with one, …; in a turn, lanes with live work before those with replayed work
     * only), so no client takes more than its share while others wait. Only the head of a queue (none of the same
     * client and sensor in flight, none before it pending) is taken, so each queue is posted one at a time, in order:
     * its live notifications in sequence order, then its replayed ones in sequence order. A lane's live work goes
     * before its replayed work; paused clients are taken nothing.
     * <p>
     * {@code lookEverywhere}: the lanes are also every client with pending notifications (found by a skip scan of the
     * same index, one probe per such client), those not in {@code room} with {@code newLaneRoom}; and first the
     * notifications whose lease ran out (a crashed instance's) are made pending again, their attempt counted. A lease
     * counts from the claim itself, not from the start of its transaction.
     *
     * @param room each lane's room: what it may be given at most (a lane with 0 is given nothing), and what it has
     *             in flight
     */
    public List<Delivery> claim(Map<UUID, Lanes.Room> room, boolean lookEverywhere, int newLaneRoom, int total,
                                Duration lease) {
        if (total <= 0 || (!lookEverywhere && room.isEmpty())) {
            return List.of();
        }
        if (!lookEverywhere) {
            // one statement, committed on its own: a round trip where a transaction of its own took three, each a
            // wait for the database's turn on a busy machine
            return claimHeads(room, false, newLaneRoom, total, lease);
        }
        return tx.execute(status -> {
            jdbc.update("""
                    UPDATE notifications n
                       SET status = 'pending', lease_until = NULL
                      FROM (SELECT x.id FROM notifications x
                             WHERE x.status = 'delivering' AND x.lease_until < now()
                               FOR UPDATE SKIP LOCKED) expired
                     WHERE n.id = expired.id""");
            return claimHeads(room, true, newLaneRoom, total, lease);
        });
    }

    /** Claims the lanes' due heads of queues and reads what their requests need, in one statement. */
    private List<Delivery> claimHeads(Map<UUID, Lanes.Room> room, boolean lookEverywhere, int newLaneRoom, int total,
                                      Duration lease) {
        return jdbc.query(con -> {
            var ps = con.prepareStatement((lookEverywhere ? LANES_EVERYWHERE : LANES_GIVEN) + """
                    , claimed AS (
                        UPDATE notifications n
                           SET status = 'delivering', attempts = n.attempts + 1,
                               lease_until = clock_timestamp() + make_interval(secs => ?)
                         -- an array, not a join: the planner cannot bound the rows a lane's lateral gives (its limit is
                         -- a column), and joined it chose to read the whole table for a hash join (31 ms, not 5)
                         WHERE n.id = ANY (ARRAY(SELECT r.id
                                  FROM (SELECT q.id, dense_rank() OVER (ORDER BY q.turn, q.replay_only, q.first_due, q.client_id) AS nth
                                          FROM (SELECT x.id, l.client_id, x.turn,
                                                       bool_and(x.replayed) OVER (PARTITION BY l.client_id, x.turn) AS replay_only,
                                                       min(x.next_attempt_at) OVER (PARTITION BY l.client_id, x.turn) AS first_due
                                                  FROM lanes l
                                                  JOIN clients c ON c.id = l.client_id AND c.enabled
                                                  CROSS JOIN LATERAL (
                                                       SELECT y.id, y.next_attempt_at, y.replayed,
                                                              l.in_flight + 1 + (row_number() OVER (ORDER BY y.replayed, y.next_attempt_at) - 1)
                                                                                / c.max_events_per_request AS turn
                                                         -- the live range, then the replayed one if room is left: each
                                                         -- by index, the second read only if the first falls short
                                                         FROM (SELECT * FROM (%1$s) live
                                                               UNION ALL
                                                               SELECT * FROM (%2$s) replayed
                                                               LIMIT l.room * c.max_events_per_request) y) x
                                                 WHERE l.room > 0) q) r
                                 WHERE r.nth <= ?))
                        RETURNING n.id, n.client_id, n.sensor_id, n.event_id, n.attempts, n.trace_parent,
                                  n.replayed, n.next_attempt_at)
                        SELECT n.id, n.client_id, c.url, c.webhook_secret,
                               CASE WHEN c.previous_secret_until > now() THEN c.previous_secret END,
                               -- an escalation's client was named by the alarm's chain, linked or not, and hears
                               -- its clearing; a step in flight as its alarm was acknowledged or cleared is not
                               -- tried again after a failure or a lost lease
                               CASE WHEN e.type = 'sensor.alarm_escalated'
                                    THEN a.acknowledged_at IS NULL AND a.cleared_at IS NULL
                                    ELSE cs.client_id IS NOT NULL
                                         OR e.type IN %4$s
                                            AND EXISTS (SELECT 1 FROM alarm_escalations ae
                                                         WHERE ae.alarm_id = e.alarm_id AND ae.client_id = n.client_id
                                                           AND ae.sent_at IS NOT NULL)
                                         -- the end of an alarm its sensor's deletion closed, given to those told of
                                         -- it (V42) once the links were gone with the sensor
                                         OR e.type IN %4$s
                                            AND NOT EXISTS (SELECT 1 FROM sensors r
                                                             WHERE r.id = n.sensor_id AND r.created_at <= a.recorded_at) END,
                               n.sensor_id, s.address, e.type, e.state, e.previous_state, e.sequence,
                               e.occurred_at, n.attempts,
                               %3$s,
                               n.trace_parent, c.max_events_per_request, n.replayed, e.maintenance
                          FROM claimed n
                          JOIN sensor_events e ON e.id = n.event_id
                          LEFT JOIN alarms a ON a.id = e.alarm_id
                          LEFT JOIN clients c ON c.id = n.client_id
                          LEFT JOIN client_sensors cs ON cs.client_id = n.client_id AND cs.sensor_id = n.sensor_id
                          LEFT JOIN sensors s ON s.id = n.sensor_id
                         ORDER BY n.replayed, n.next_attempt_at""".formatted(headsOfALane(false), headsOfALane(true),
                    ALARM_COLUMNS, io.lockwatch.ingest.SensorEvent.ALARM_CLEARINGS_SQL));
            int i = 1;
            List<UUID> lanes = List.copyOf(room.keySet());
            ps.setArray(i++, con.createArrayOf("uuid", lanes.toArray()));
            ps.setArray(i++, con.createArrayOf("int4", lanes.stream().map(l -> room.get(l).room()).toArray()));
            ps.setArray(i++, con.createArrayOf("int4", lanes.stream().map(l -> room.get(l).inFlight()).toArray()));
            if (lookEverywhere) {
                ps.setInt(i++, newLaneRoom);
            }
            ps.setDouble(i++, lease.toMillis() / 1000.0);
            ps.setInt(i, total);
            return ps;
        }, (rs, i) -> new Delivery(rs.getObject(1, UUID.class), rs.getObject(2, UUID.class), rs.getString(3),
                openOrNull(rs.getString(4), rs.getObject(2, UUID.class)), openOrNull(rs.getString(5), null), rs.getBoolean(6), rs.getString(7), rs.getString(8), rs.getString(9),
                (Integer) rs.getObject(10, Integer.class), (Integer) rs.getObject(11, Integer.class), rs.getLong(12),
                rs.getTimestamp(13).getTime(), rs.getInt(14), alarm(rs), rs.getString("trace_parent"),
                rs.getObject("max_events_per_request") == null ? 1 : rs.getInt("max_events_per_request"),
                rs.getBoolean("replayed"), rs.getBoolean("maintenance")));
    }

    /**
     * A lane's due heads of queues, live or replayed, oldest due first, locked: a head is a notification of its client
     * and sensor with none of theirs in flight and none before it pending, where live ones come before replayed ones,
     * each in sequence order.
     */
    private static String headsOfALane(boolean replayed) {
        return """
                SELECT d.id, d.next_attempt_at, d.replayed
                  FROM notifications d
                 WHERE d.client_id = l.client_id AND d.status = 'pending' AND d.replayed = %s
                   AND d.next_attempt_at <= now()
                   -- OFFSET 0 keeps this a subplan run for each candidate, looked up by its client and sensor:
                   -- pulled up into an anti-join, the planner was free to look the queue up by its client alone (the
                   -- lane's), and did while the table's statistics were those of an empty table (a new install's
                   -- first hour): every claim then read each pending notification of the client once per candidate,
                   -- 1,500 buffers a claim and 10 ms for 8 rows with 5,000 pending (issue 55)
                   AND NOT EXISTS (SELECT 1 FROM notifications o
                                    WHERE o.client_id = d.client_id AND o.sensor_id = d.sensor_id
                                      AND (o.status = 'delivering'
                                           OR o.status = 'pending' AND (o.replayed, o.sequence) < (d.replayed, d.sequence))
                                   OFFSET 0)
                 ORDER BY d.next_attempt_at
                 LIMIT l.room * c.max_events_per_request
                   FOR UPDATE OF d SKIP LOCKED""".formatted(replayed);
    }

    /** The lanes a claim serves: those given, each with its room. */
    private static final String LANES_GIVEN = """
            WITH lanes AS (SELECT * FROM unnest(?::uuid[], ?::int[], ?::int[]) AS r (client_id, room, in_flight))
            """;

    /**
     * The lanes a claim serves when it looks everywhere: every client with a pending notification, by a skip scan of
     * {@code notifications_due_live_first} (one probe per such client, however many are pending), with the room
     * given, else a new lane's.
     */
    private static final String LANES_EVERYWHERE = """
            WITH RECURSIVE given AS (SELECT * FROM unnest(?::uuid[], ?::int[], ?::int[]) AS r (client_id, room, in_flight)),
            pending_clients (client_id) AS (
                (SELECT client_id FROM notifications WHERE status = 'pending' ORDER BY client_id LIMIT 1)
                UNION ALL
                SELECT (SELECT n.client_id FROM notifications n
                         WHERE n.status = 'pending' AND n.client_id > p.client_id ORDER BY n.client_id LIMIT 1)
                  FROM pending_clients p WHERE p.client_id IS NOT NULL),
            lanes AS (SELECT p.client_id, coalesce(g.room, ?) AS room, coalesce(g.in_flight, 0) AS in_flight
                        FROM pending_clients p LEFT JOIN given g ON g.client_id = p.client_id
                       WHERE p.client_id IS NOT NULL)
            """;

    /**
     * The columns {@link #alarm} reads, of {@code sensor_events e LEFT JOIN alarms a ON a.id = e.alarm_id}: a query
     * that shows an event as its webhook does selects them.
     */
    static final String ALARM_COLUMNS = """
            a.id AS alarm_id, a.type AS alarm_type, a.opened_at AS alarm_opened_at,
            a.threshold_seconds AS alarm_threshold_seconds, a.battery AS alarm_battery,
            a.threshold_percent AS alarm_threshold_percent, a.raised_at AS alarm_raised_at,
            a.cleared_at AS alarm_cleared_at, a.severity AS alarm_severity, e.escalation_step AS alarm_escalation_step,
            e.escalation_link_client_id AS alarm_escalation_chain_client_id""";

    /** The alarm of an alarm's event, as its webhook shows it ({@link #ALARM_COLUMNS}); else null. */
    static Map<String, Object> alarm(java.sql.ResultSet rs) throws java.sql.SQLException {
        UUID id = rs.getObject("alarm_id", UUID.class);
        if (id == null) {
            return null;
        }
        Map<String, Object> a = new java.util.LinkedHashMap<>();
        a.put("id", id.toString());
        a.put("type", rs.getString("alarm_type"));
        java.sql.Timestamp opened = rs.getTimestamp("alarm_opened_at");
        java.sql.Timestamp cleared = rs.getTimestamp("alarm_cleared_at");
        a.put("opened_at", opened.toInstant().toString());
        boolean door = rs.getObject("alarm_threshold_seconds") != null;
        if (door) {
            a.put("threshold_seconds", rs.getInt("alarm_threshold_seconds"));
        }
        if (rs.getObject("alarm_battery") != null) { // battery_low
            a.put("battery", io.lockwatch.ingest.DeviceHealth.asSaid(rs.getFloat("alarm_battery")));
            a.put("threshold_percent", rs.getInt("alarm_threshold_percent"));
        }
        a.put("raised_at", rs.getTimestamp("alarm_raised_at").toInstant().toString());
        a.put("cleared_at", cleared == null ? null : cleared.toInstant().toString());
        if (door) {
            a.put("open_seconds", cleared == null ? null : (cleared.getTime() - opened.getTime()) / 1000.0);
        }
        a.put("severity", rs.getString("alarm_severity"));
        if (rs.getObject("alarm_escalation_step") != null) {
            a.put("escalation_step", rs.getInt("alarm_escalation_step"));
            UUID chainOf = rs.getObject("alarm_escalation_chain_client_id", UUID.class);
            if (chainOf != null) {
                a.put("escalation_chain_client_id", chainOf.toString());
            }
        }
        return a;
    }

    /** Why a delivery is not attempted when its client's secret cannot be opened (its attempt fails with it). */
    static final String SECRET_UNOPENED = "the client's webhook secret cannot be opened with the configured keys";

    /**
     * A stored secret opened; null, with the reason logged, when it cannot be (sealed with a key no longer
     * configured, or altered): that client's deliveries then fail, and no other's.
     */
    private String openOrNull(String stored, UUID client) {
        try {
            return cipher.open(stored);
        } catch (IllegalStateException e) {
            if (client != null) {
                log.error("Client {}: {}", client, e.getMessage());
            }
            return null;
        }
    }

    /**
     * The instances alive now: those that renewed their row in {@code ingest_members} (every instance keeps one, V16)
     * within {@code timeout}; at least 1, this one.
     */
    public int liveInstances(Duration timeout) {
        Integer n = jdbc.queryForObject("SELECT count(*) FROM ingest_members WHERE seen_at > now() - make_interval(secs => ?)",
                Integer.class, timeout.toMillis() / 1000.0);
        return n == null ? 1 : Math.max(1, n);
    }

    /** For a gauge: the retry queue, pending after a failed attempt. */
    long countRetrying() {
        Long n = jdbc.queryForObject("SELECT count(*) FROM notifications WHERE status = 'pending' AND attempts > 0", Long.class);
        return n == null ? 0 : n;
    }

    /** For a gauge: the dead notifications an operator should look at. */
    long countDead() {
        Long n = jdbc.queryForObject("SELECT count(*) FROM notifications WHERE status = 'dead'", Long.class);
        return n == null ? 0 : n;
    }

    /**
     * The attempts and their outcomes, in one transaction of a few statements whatever their number. Each outcome is
     * written only if its attempt still holds the claim (not claimed again after its lease ran out).
     *
     * @return the notifications among them that finished (delivered or dead) while a newer one of the same client
     *         and sensor waits: that one is due now, not at the next poll
     */
    public Set<UUID> recordAttempts(List<FinishedAttempt> attempts) {
        return tx.execute(status -> {
            jdbc.update(con -> {
                var ps = con.prepareStatement("""
                        INSERT INTO delivery_attempts (notification_id, client_id, sensor_id, event_type, attempt,
                                                       status_code, error, duration_ms, attempted_at)
                        SELECT u.notification_id, u.client_id, u.sensor_id, u.event_type, u.attempt, u.status_code,
                               u.error, u.duration_ms, to_timestamp(u.attempted_at / 1000.0)
                          FROM unnest(?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::int[], ?::int[], ?::text[],
                                      ?::int[], ?::bigint[])
                               AS u (notification_id, client_id, sensor_id, event_type, attempt, status_code, error,
                                     duration_ms, attempted_at)""");
                ps.setArray(1, con.createArrayOf("uuid", column(attempts, a -> a.delivery().id())));
                ps.setArray(2, con.createArrayOf("uuid", column(attempts, a -> a.delivery().clientId())));
                ps.setArray(3, con.createArrayOf("text", column(attempts, a -> a.delivery().sensorId())));
                ps.setArray(4, con.createArrayOf("text", column(attempts, a -> a.delivery().type())));
                ps.setArray(5, con.createArrayOf("int4", column(attempts, a -> a.delivery().attempt())));
                ps.setArray(6, con.createArrayOf("int4", column(attempts, FinishedAttempt::statusCode))); // null without an answer
                ps.setArray(7, con.createArrayOf("text", column(attempts, FinishedAttempt::error)));
                ps.setArray(8, con.createArrayOf("int4", column(attempts, a -> (int) a.durationMs())));
                ps.setArray(9, con.createArrayOf("int8", column(attempts, FinishedAttempt::startedAt)));
                return ps;
            });
            // an endpoint is failing from its first failure after a success (a failure in the same group wins);
            // written only where that changes, in one statement, and before the notification rows: pausing and
            // resuming take a client's row first too
            Map<UUID, Boolean> ok = new java.util.TreeMap<>();
            attempts.forEach(a -> ok.merge(a.delivery().clientId(), a.outcome() == Outcome.DELIVERED, Boolean::logicalAnd));
            jdbc.update(con -> {
                // the ids once more as = ANY: joined to unnest alone, a table of a thousand clients was scanned whole
                // for each group and hash-joined (2.3 ms); this way they are looked up by key (0.2 ms)
                var ps = con.prepareStatement("""
                        UPDATE clients c SET failing_since = CASE WHEN u.ok THEN NULL ELSE now() END
                          FROM unnest(?::uuid[], ?::boolean[]) AS u (id, ok)
                         WHERE c.id = u.id AND c.id = ANY (?::uuid[]) AND u.ok = (c.failing_since IS NOT NULL)""");
                java.sql.Array ids = con.createArrayOf("uuid", ok.keySet().toArray());
                ps.setArray(1, ids);
                ps.setArray(2, con.createArrayOf("boolean", ok.values().toArray()));
                ps.setArray(3, ids);
                return ps;
            });
            List<FinishedAttempt> failed = attempts.stream().filter(a -> a.outcome() != Outcome.DELIVERED).toList();
            List<UUID> failedClients = failed.stream().map(a -> a.delivery().clientId()).toList();
            List<FinishedAttempt> delivered = new ArrayList<>();
            List<Object[]> retried = new ArrayList<>();
            List<Object[]> dead = new ArrayList<>();
            for (FinishedAttempt a : attempts) {
                Delivery d = a.delivery();
                switch (a.outcome()) {
                    case DELIVERED -> delivered.add(a);
                    case RETRY -> retried.add(new Object[] {Timestamp.from(a.nextAttemptAt()), a.statusCode(), a.error(),
                            d.id(), d.attempt()});
                    case DEAD -> dead.add(new Object[] {a.statusCode(), a.error(), d.id(), d.attempt()});
                }
            }
            if (!delivered.isEmpty()) {
                // most attempts deliver: one statement for all of them, their rows locked in id order (a fixed order)
                List<FinishedAttempt> byId = delivered.stream()
                        .sorted(java.util.Comparator.comparing(a -> a.delivery().id())).toList();
                jdbc.update(con -> {
                    var ps = con.prepareStatement("""
                            UPDATE notifications n
                               SET status = 'delivered', finished_at = now(), lease_until = NULL, last_status = u.status,
                                   last_error = NULL
                              FROM unnest(?::uuid[], ?::int[], ?::int[]) AS u (id, attempts, status)
                             WHERE n.id = u.id AND n.status = 'delivering' AND n.attempts = u.attempts""");
                    ps.setArray(1, con.createArrayOf("uuid", column(byId, a -> a.delivery().id())));
                    ps.setArray(2, con.createArrayOf("int4", column(byId, a -> a.delivery().attempt())));
                    ps.setArray(3, con.createArrayOf("int4", column(byId, FinishedAttempt::statusCode)));
                    return ps;
                });
            }
            batch("""
                    UPDATE notifications n
                       SET status = 'pending', next_attempt_at = ?, lease_until = NULL, last_status = ?, last_error = ?
                     WHERE n.id = ? AND n.status = 'delivering' AND n.attempts = ?""", retried);
            batch("""
                    UPDATE notifications SET status = 'dead', finished_at = now(), lease_until = NULL,
                           last_status = ?, last_error = ?
                     WHERE id = ? AND status = 'delivering' AND attempts = ?""", dead);
            if (!failed.isEmpty()) {
                // their heads failed: what queued behind them collapses (Outbox)
                collapse(failedClients, failed.stream().map(a -> a.delivery().sensorId()).toList());
            }
            return successorsWaiting(attempts.stream().filter(a -> a.outcome() != Outcome.RETRY).toList());
        });
    }

    /**
     * Of these finished attempts, those whose queue (client and sensor) holds another notification still to send: a
     * newer live one, or a replayed one (older, but behind the live head).
     */
    private Set<UUID> successorsWaiting(List<FinishedAttempt> finished) {
        if (finished.isEmpty()) {
            return Set.of();
        }
        return new java.util.HashSet<>(jdbc.query(con -> {
            var ps = con.prepareStatement("""
                    SELECT u.id FROM unnest(?::uuid[], ?::uuid[], ?::text[]) AS u (id, client_id, sensor_id)
                     WHERE EXISTS (SELECT 1 FROM notifications o
                                    WHERE o.client_id = u.client_id AND o.sensor_id = u.sensor_id
                                      AND o.status = 'pending')""");
            ps.setArray(1, con.createArrayOf("uuid", column(finished, a -> a.delivery().id())));
            ps.setArray(2, con.createArrayOf("uuid", column(finished, a -> a.delivery().clientId())));
            ps.setArray(3, con.createArrayOf("text", column(finished, a -> a.delivery().sensorId())));
            return ps;
        }, (rs, i) -> rs.getObject(1, UUID.class)));
    }

    private static Object[] column(List<FinishedAttempt> attempts, java.util.function.Function<FinishedAttempt, ?> value) {
        Object[] values = new Object[attempts.size()];
        for (int i = 0; i < values.length; i++) {
            values[i] = value.apply(attempts.get(i));
        }
        return values;
    }

    private void collapse(List<UUID> clients, List<String> sensors) {
        jdbc.execute((ConnectionCallback<Void>) c -> {
            Outbox.collapse(c, clients, sensors);
            return null;
        });
    }

    /** An operator's pause: only an operator lifts it, not the client's own key. */
    public static final String PAUSED_BY_AN_OPERATOR = "paused by an operator";

    /**
     * Pauses a client: nothing is posted to it until it is resumed, and its queues collapse meanwhile.
     *
     * @return whether it was running until now
     */
    public boolean pause(UUID client, String reason) {
        Boolean paused = tx.execute(status -> {
            int n = jdbc.update("""
                    UPDATE clients SET enabled = false, paused_reason = ?, paused_at = now(), updated_at = now()
                     WHERE id = ? AND enabled""", reason, client);
            if (n > 0) {
                jdbc.execute((ConnectionCallback<Void>) c -> {
                    Outbox.collapseAll(c, client);
                    return null;
                });
            } else if (PAUSED_BY_AN_OPERATOR.equals(reason)) {
                // paused already (by itself, or its endpoint): what holds it now is the operator's pause
                jdbc.update("UPDATE clients SET paused_reason = ?, updated_at = now() WHERE id = ? AND NOT enabled",
                        reason, client);
            }
            return n > 0;
        });
        return Boolean.TRUE.equals(paused);
    }

    /**
     * Where and how a client is posted to: its URL, the secrets that sign for it now, and the events it takes in one
     * request (above 1, every body it is sent is a JSON array).
     */
    public record Target(String url, String secret, String previousSecret, int maxEventsPerRequest) {
    }

    /** @return null if there is no such client */
    public Target target(UUID client) {
        List<Target> found = jdbc.query("""
                SELECT url, webhook_secret, CASE WHEN previous_secret_until > now() THEN previous_secret END,
                       max_events_per_request
                  FROM clients WHERE id = ?""",
                (rs, i) -> new Target(rs.getString(1), openOrNull(rs.getString(2), client), openOrNull(rs.getString(3), null),
                        rs.getInt(4)),
                client);
        return found.isEmpty() ? null : found.get(0);
    }

    /**
     * Every notification of the client created since {@code since} that it was not sent (dead or superseded) is
     * due again, as new attempts, with its own webhook-id: its queue posts them in sequence order. For a
     * {@code latest_state} client, only those that are still the newest of their sensor.
     *
     * @return how many; null if there is no such client
     */
    public Integer replay(UUID client, java.time.Instant since) {
        return tx.execute(status -> {
            if (!clientExists(client)) {
                return null;
            }
            // a latest_state client is sent a sensor's newest state only: an older one replayed would arrive
            // after it and read as the door's state now
            return jdbc.update("""
                    UPDATE notifications n
                       SET status = 'pending', attempts = 0, next_attempt_at = now(), finished_at = NULL,
                           lease_until = NULL, last_error = NULL, superseded_by = NULL,
                           superseded_reason = NULL, replayed = true
                     WHERE n.client_id = ? AND n.created_at >= ? AND n.status IN ('dead', 'superseded')
                       AND (NOT EXISTS (SELECT 1 FROM clients c WHERE c.id = n.client_id AND c.delivery_mode = 'latest_state')
                            OR NOT EXISTS (SELECT 1 FROM notifications newer
                                            WHERE newer.client_id = n.client_id AND newer.sensor_id = n.sensor_id
                                              AND newer.sequence > n.sequence))""",
                    client, Timestamp.from(since));
        });
    }

    private boolean clientExists(UUID client) {
        return Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM clients WHERE id = ?)", Boolean.class,
                client));
    }

    /**
     * A dead or cancelled notification is due again, from its first attempt, with the same webhook-id.
     *
     * @return whether it was dead or cancelled (and is now pending)
     */
    public boolean redeliver(UUID id) {
        return jdbc.update("""
                UPDATE notifications SET status = 'pending', attempts = 0, next_attempt_at = now(), finished_at = NULL,
                       lease_until = NULL, replayed = true
                 WHERE id = ? AND status IN ('dead', 'cancelled')
                   -- a pull client is posted nothing: it reads its feed
                   AND client_id NOT IN (SELECT id FROM clients WHERE delivery_mode = 'pull')""", id) > 0;
    }

    /**
     * Every dead notification of the client is due again, each from its first attempt.
     *
     * @return how many; null if there is no such client
     */
    public Integer redeliverDead(UUID client) {
        return tx.execute(status -> {
            if (!clientExists(client)) {
                return null;
            }
            return jdbc.update("""
                    UPDATE notifications SET status = 'pending', attempts = 0, next_attempt_at = now(), finished_at = NULL,
                           lease_until = NULL, replayed = true
                     WHERE client_id = ? AND status = 'dead'""", client);
        });
    }

    /**
     * How the client's deliveries went over the last hour and the last day: attempts delivered and failed,
     * notifications that went dead, and the latency from the event to the 2xx.
     */
    public Map<String, Object> deliveryStats(UUID client) {
        Map<String, Object> stats = new java.util.LinkedHashMap<>();
        for (var window : List.of(Map.entry("last_hour", 3600), Map.entry("last_day", 86_400))) {
            stats.put(window.getKey(), jdbc.queryForObject("""
                    SELECT count(*) FILTER (WHERE a.error IS NULL) AS delivered,
                           count(*) FILTER (WHERE a.error IS NOT NULL) AS failed,
                           (SELECT count(*) FROM notifications d
                             WHERE d.client_id = ? AND d.status = 'dead'
                               AND d.finished_at >= now() - make_interval(secs => ?)) AS dead,
                           percentile_cont(0.5) WITHIN GROUP (ORDER BY a.latency_ms) AS p50,
                           percentile_cont(0.99) WITHIN GROUP (ORDER BY a.latency_ms) AS p99
                      FROM (SELECT x.error,
                                   CASE WHEN x.error IS NULL THEN extract(epoch FROM x.attempted_at - e.occurred_at) * 1000
                                        + x.duration_ms END AS latency_ms
                              FROM delivery_attempts x
                              JOIN notifications n ON n.id = x.notification_id
                              JOIN sensor_events e ON e.id = n.event_id
                             WHERE x.client_id = ? AND x.attempted_at >= now() - make_interval(secs => ?)) a""",
                    (rs, i) -> {
                        Map<String, Object> w = new java.util.LinkedHashMap<>();
                        w.put("delivered", rs.getLong("delivered"));
                        w.put("failed", rs.getLong("failed"));
                        w.put("dead", rs.getLong("dead"));
                        double p50 = rs.getDouble("p50");
                        w.put("latency_p50_ms", rs.wasNull() ? null : Math.round(p50));
                        double p99 = rs.getDouble("p99");
                        w.put("latency_p99_ms", rs.wasNull() ? null : Math.round(p99));
                        return w;
                    }, client, (double) window.getValue(), client, (double) window.getValue()));
        }
        List<Map<String, Object>> last = jdbc.query("""
                SELECT error, status_code, attempted_at FROM delivery_attempts
                 WHERE client_id = ? AND error IS NOT NULL ORDER BY attempted_at DESC LIMIT 1""", (rs, i) -> {
            Map<String, Object> e = new java.util.LinkedHashMap<>();
            e.put("error", rs.getString("error"));
            int code = rs.getInt("status_code");
            e.put("status_code", rs.wasNull() ? null : code);
            e.put("at", rs.getTimestamp("attempted_at").toInstant().toString());
            return e;
        }, client);
        stats.put("last_error", last.isEmpty() ? null : last.get(0));
        return stats;
    }

    /**
     * Resumes a paused client: what waits for it is due at once, and its endpoint starts afresh (not failing).
     *
     * @return whether it was paused until now
     */
    public boolean resume(UUID client) {
        return resume(client, true);
    }

    /** As {@link #resume}, by the client's own key: a pause of an operator's stays (false). */
    public boolean resumeUnlessPausedByAnOperator(UUID client) {
        return resume(client, false);
    }

    private boolean resume(UUID client, boolean operatorsToo) {
        Boolean resumed = tx.execute(status -> {
            int n = jdbc.update("""
                    UPDATE clients SET enabled = true, paused_reason = NULL, paused_at = NULL, failing_since = NULL,
                           updated_at = now()
                     WHERE id = ? AND NOT enabled AND (? OR paused_reason IS DISTINCT FROM ?)""",
                    client, operatorsToo, PAUSED_BY_AN_OPERATOR);
            if (n > 0) {
                jdbc.update("UPDATE notifications SET next_attempt_at = now() WHERE client_id = ? AND status = 'pending'",
                        client);
            }
            return n > 0;
        });
        return Boolean.TRUE.equals(resumed);
    }

    /** The client's endpoint has failed without a success for longer than {@code limit}: paused, then. */
    public boolean pauseIfFailingLongerThan(UUID client, Duration limit) {
        Boolean failing = jdbc.queryForObject("""
                SELECT coalesce(failing_since < now() - make_interval(secs => ?), false) FROM clients WHERE id = ?""",
                Boolean.class, (double) limit.toSeconds(), client);
        return Boolean.TRUE.equals(failing) && pause(client, "the endpoint failed without a success for longer than " + limit);
    }

    private void batch(String sql, List<Object[]> args) {
        if (!args.isEmpty()) {
            jdbc.batchUpdate(sql, args);
        }
    }

    /** The client is gone or no longer linked to the sensor: nothing is sent. */
    public void cancel(Delivery d) {
        jdbc.update("""
                UPDATE notifications SET status = 'cancelled', finished_at = now(), lease_until = NULL,
                       attempts = attempts - 1
                 WHERE id = ? AND status = 'delivering' AND attempts = ?""", d.id(), d.attempt());
    }

    public enum Outcome { DELIVERED, RETRY, DEAD }
}
