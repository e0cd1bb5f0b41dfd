package io.lockwatch.notify;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * The outbox of webhook deliveries, written in the transaction that records the events: one notification per
 * event and linked client that asked for its type. The notifications of one sensor to one client form a queue,
 * posted head first, in {@code sequence} order.
 * <p>
 * A queue collapses (its older pending notifications are superseded by the newest of the same kind, which
 * stays) only where an endpoint cannot take every event: its client is paused or failing, or the queue's head
 * has failed and waits for a retry. A {@code latest_state} client's queues always collapse, whatever the kind.
 * So a healthy endpoint hears every event, and one that comes back hears the current state and connectivity
 * rather than hours of stale flapping.
 */
public final class Outbox {

    /**
     * Collapses the queues of the given (client, sensor) pairs that are to collapse. {@code %s} is the query of
     * the pairs to look at; each kept head inherits the latest retry time of those it replaced, so that new
     * events do not hit a failing endpoint faster than its retry schedule.
     */
    private static final String COLLAPSE = """
            WITH touched AS (%s),
            pairs AS (
                SELECT t.client_id, t.sensor_id, cl.delivery_mode = 'latest_state' AS latest,
                       CASE WHEN cl.delivery_mode = 'latest_state' THEN 'latest_state'
                            WHEN NOT cl.enabled THEN 'paused'
                            WHEN cl.failing_since IS NOT NULL THEN 'failing'
                            ELSE 'retrying' END AS reason
                  FROM touched t JOIN clients cl ON cl.id = t.client_id
                 WHERE cl.delivery_mode = 'latest_state' OR NOT cl.enabled OR cl.failing_since IS NOT NULL
                    OR EXISTS (SELECT 1 FROM notifications h
                                WHERE h.client_id = t.client_id AND h.sensor_id = t.sensor_id
                                  AND h.status IN ('pending', 'delivering') AND h.last_error IS NOT NULL)),
            -- each queued notification with the newest of its queue and kind, by a window: a join of the queue with
            -- its newest ones is planned as a nested loop (the CTEs are estimated at one row), quadratic in the
            -- queues touched: 10,000 escalations to one paused client took 28 s
            queued AS (
                SELECT x.*, max(x.sequence) OVER w AS newest_sequence,
                       first_value(x.id) OVER (w ORDER BY x.sequence DESC) AS newest_id
                  FROM (SELECT n.id, n.client_id, n.sensor_id, n.sequence, n.status, n.next_attempt_at, p.reason,
                               CASE WHEN p.latest THEN 'any'
                                    WHEN n.type LIKE 'sensor.connection%%' THEN 'connectivity'
                                    ELSE n.type END AS kind
                          FROM notifications n JOIN pairs p ON p.client_id = n.client_id AND p.sensor_id = n.sensor_id
                         WHERE n.status IN ('pending', 'delivering')) x
                WINDOW w AS (PARTITION BY x.client_id, x.sensor_id, x.kind)),
            superseded AS (
                UPDATE notifications o
                   SET status = 'superseded', finished_at = now(), superseded_by = q.newest_id,
                       superseded_reason = q.reason
                  FROM queued q
                 WHERE o.id = q.id AND q.status = 'pending' AND q.sequence < q.newest_sequence
                RETURNING o.id, o.client_id, o.sensor_id, q.next_attempt_at)
            UPDATE notifications h
               SET next_attempt_at = s.next_attempt_at
              FROM (SELECT client_id, sensor_id, max(next_attempt_at) AS next_attempt_at
                      FROM superseded GROUP BY client_id, sensor_id) s
             WHERE h.client_id = s.client_id AND h.sensor_id = s.sensor_id AND h.status = 'pending'
               AND h.next_attempt_at < s.next_attempt_at AND h.id NOT IN (SELECT id FROM superseded)""";

    /** {@link #notifying}; a latest_state client is not even given the older events of a sensor in the same batch. */
    private static final String NOTIFYING = """
            created AS (
            INSERT INTO notifications (id, event_id, client_id, sensor_id, type, sequence, status, finished_at,
                                       superseded_by, superseded_reason, trace_parent, feed_tx)
            SELECT x.id, x.event_id, x.client_id, x.sensor_id, x.type, x.sequence,
                   -- a pull client's row is its feed's: never posted
                   CASE WHEN x.pull THEN 'pulled'
                        WHEN x.latest AND x.sequence < x.newest THEN 'superseded' ELSE 'pending' END,
                   CASE WHEN x.pull OR x.latest AND x.sequence < x.newest THEN now() END,
                   CASE WHEN NOT x.pull AND x.latest AND x.sequence < x.newest THEN x.newest_id END,
                   CASE WHEN NOT x.pull AND x.latest AND x.sequence < x.newest THEN 'latest_state' END,
                   ?::text, x.feed_tx
              FROM (SELECT y.*,
                           max(y.sequence) OVER w AS newest,
                           first_value(y.id) OVER (w ORDER BY y.sequence DESC) AS newest_id
                      FROM (SELECT gen_random_uuid() AS id, e.id AS event_id, cs.client_id, e.sensor_id, e.type,
                                   e.sequence, cl.delivery_mode = 'latest_state' AS latest,
                                   cl.delivery_mode = 'pull' AS pull, e.feed_tx
                              FROM %s
                              JOIN client_sensors cs ON cs.sensor_id = e.sensor_id
                              JOIN clients cl ON cl.id = cs.client_id
                             WHERE (cl.event_types IS NULL OR e.type = ANY (cl.event_types))
                               AND (cl.alarm_severities IS NULL OR e.alarm_id IS NULL
                                    OR (SELECT a.severity FROM alarms a WHERE a.id = e.alarm_id)
                                       = ANY (cl.alarm_severities))) y
                    WINDOW w AS (PARTITION BY y.client_id, y.sensor_id)) x
            RETURNING status, client_id, sensor_id, event_id)
            SELECT count(*) FILTER (WHERE status = 'pending'),
                   array_agg(DISTINCT client_id) FILTER (WHERE status = 'pending'),
                   -- the events, if a queue touched may collapse (COLLAPSE's own test of its pairs): mostly
                   -- not, and then the batch is spared that statement's round trip
                   CASE WHEN EXISTS (SELECT 1 FROM created t JOIN clients cl ON cl.id = t.client_id
                            WHERE cl.delivery_mode = 'latest_state' OR NOT cl.enabled OR cl.failing_since IS NOT NULL
                               OR EXISTS (SELECT 1 FROM notifications h
                                           WHERE h.client_id = t.client_id AND h.sensor_id = t.sensor_id
                                             AND h.status IN ('pending', 'delivering') AND h.last_error IS NOT NULL))
                        THEN array_agg(DISTINCT event_id) END
              FROM created""";

    /** {@link #notificationsOf}' statement. */
    private static final String NOTIFICATIONS_OF = "WITH " + NOTIFYING.formatted("(SELECT * FROM sensor_events WHERE id = ANY (?)) e");

    private Outbox() {
    }

    /**
     * What {@link #notificationsFor} (or a statement ending with {@link #notifying}) wrote: how many notifications are
     * pending now, and for which clients (their lanes have work).
     */
    public record Notified(int pending, Set<UUID> clients) {
        public static final Notified NONE = new Notified(0, Set.of());

        public Notified plus(Notified other) {
            Set<UUID> all = new HashSet<>(clients);
            all.addAll(other.clients);
            return new Notified(pending + other.pending, all);
        }
    }

    /**
     * @param traceParent the W3C traceparent of the span recording these events, kept with each notification so
     *                    that its delivery attempts join that trace; null when tracing is off
     */
    public static Notified notificationsFor(Connection c, List<Long> recorded, String traceParent) throws SQLException {
        if (recorded.isEmpty()) {
            return Notified.NONE;
        }
        // what an open maintenance window holds is sent, if still true, when it ends
        Set<Long> held = io.lockwatch.maintenance.Maintenance.held(c, recorded);
        return notificationsOf(c, held.isEmpty() ? recorded : recorded.stream().filter(id -> !held.contains(id)).toList(),
                traceParent);
    }

    /** The notifications of these events, none of which a maintenance window holds. */
    private static Notified notificationsOf(Connection c, List<Long> eventIds, String traceParent) throws SQLException {
        if (eventIds.isEmpty()) {
            return Notified.NONE;
        }
        try (PreparedStatement ps = c.prepareStatement(NOTIFICATIONS_OF)) {
            ps.setString(1, traceParent);
            ps.setArray(2, c.createArrayOf("int8", eventIds.toArray()));
            try (var rs = ps.executeQuery()) {
                return notified(c, rs);
            }
        }
    }

    /**
     * The notifications of {@code events}, the tail of a statement: a CTE {@code created} after which it selects what
     * {@link #notified} reads. {@code events} is an SQL FROM item aliased {@code e} with the events' {@code id,
     * sensor_id, type, sequence, alarm_id, feed_tx}. The tail's parameters: the trace parent (a W3C traceparent or
     * null), then those of {@code events}; those of the CTEs before it come first.
     */
    public static String notifying(String events) {
        return NOTIFYING.formatted(events);
    }

    /**
     * What a statement ending with {@link #notifying} wrote, read from its result; the queues touched that may
     * collapse are then collapsed (another statement, rarely needed).
     */
    public static Notified notified(Connection c, java.sql.ResultSet rs) throws SQLException {
        rs.next();
        java.sql.Array clients = rs.getArray(2);
        Notified notified = new Notified(rs.getInt(1), clients == null ? Set.of() : Set.of((UUID[]) clients.getArray()));
        java.sql.Array mayCollapse = rs.getArray(3);
        if (mayCollapse != null) {
            try (PreparedStatement ps = c.prepareStatement(COLLAPSE.formatted(
                    "SELECT DISTINCT client_id, sensor_id FROM notifications WHERE event_id = ANY (?)"))) {
                ps.setArray(1, mayCollapse);
                ps.executeUpdate();
            }
        }
        return notified;
    }

    /** An event for one client. */
    public record To(long eventId, UUID clientId) {
    }

    /**
     * A notification of each event for the client given with it, linked to the sensor or not, whatever event types it
     * asked for: an escalation step's client was named for that alarm. Then their queues are collapsed where they are
     * to be, as for {@link #notificationsFor}.
     */
    public static Notified notificationsTo(Connection c, List<To> eventClients, String traceParent)
            throws SQLException {
        if (eventClients.isEmpty()) {
            return Notified.NONE;
        }
        Set<UUID> clients = new HashSet<>();
        int pending = 0;
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO notifications (id, event_id, client_id, sensor_id, type, sequence, status, finished_at,
                                           trace_parent, feed_tx)
                SELECT gen_random_uuid(), e.id, t.client_id, e.sensor_id, e.type, e.sequence,
                       CASE WHEN cl.delivery_mode = 'pull' THEN 'pulled' ELSE 'pending' END,
                       CASE WHEN cl.delivery_mode = 'pull' THEN now() END, ?::text, e.feed_tx
                  FROM unnest(?::int8[], ?::uuid[]) AS t (event_id, client_id)
                  JOIN sensor_events e ON e.id = t.event_id
                  JOIN clients cl ON cl.id = t.client_id
                ON CONFLICT DO NOTHING
                RETURNING client_id, status""")) {
            ps.setString(1, traceParent);
            ps.setArray(2, c.createArrayOf("int8", eventClients.stream().map(To::eventId).toArray()));
            ps.setArray(3, c.createArrayOf("uuid", eventClients.stream().map(To::clientId).toArray()));
            try (var rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (rs.getString(2).equals("pending")) {
                        clients.add(rs.getObject(1, UUID.class));
                        pending++;
                    }
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement(COLLAPSE.formatted(
                "SELECT DISTINCT client_id, sensor_id FROM notifications WHERE event_id = ANY (?)"))) {
            ps.setArray(1, c.createArrayOf("int8", eventClients.stream().map(To::eventId).distinct().toArray()));
            ps.executeUpdate();
        }
        return new Notified(pending, clients);
    }

    /** Collapses the queues of these (client, sensor) pairs, where they are to collapse (see the class). */
    static void collapse(Connection c, Collection<UUID> clients, Collection<String> sensors) throws SQLException {
        if (clients.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(COLLAPSE.formatted(
                "SELECT DISTINCT client_id, sensor_id FROM unnest(?::uuid[], ?::text[]) AS t (client_id, sensor_id)"))) {
            ps.setArray(1, c.createArrayOf("uuid", clients.toArray()));
            ps.setArray(2, c.createArrayOf("text", sensors.toArray()));
            ps.executeUpdate();
        }
    }

    /** Collapses every queue of a client, where it is to collapse: after it was paused, for example. */
    static void collapseAll(Connection c, UUID client) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(COLLAPSE.formatted("""
                SELECT DISTINCT client_id, sensor_id FROM notifications
                 WHERE client_id = ? AND status IN ('pending', 'delivering')"""))) {
            ps.setObject(1, client);
            ps.executeUpdate();
        }
    }
}
