package io.lockwatch.notify;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/**
 * Writes the notifications of new events, in the transaction that records the events: one per event and
 * client linked to its sensor at that moment. Within the batch and against what is already pending, the newest
 * event of a sensor supersedes the older undelivered notifications to the same client.
 */
public final class Outbox {

    private Outbox() {
    }

    /** @return the number of notifications now pending for these events */
    public static int notificationsFor(Connection c, List<Long> eventIds) throws SQLException {
        if (eventIds.isEmpty()) {
            return 0;
        }
        int pending;
        try (PreparedStatement ps = c.prepareStatement("""
                WITH created AS (
                INSERT INTO notifications (event_id, client_id, sensor_id, type, sequence, status, finished_at)
                SELECT e.id, cs.client_id, e.sensor_id, e.type, e.sequence,
                       CASE WHEN e.sequence < max(e.sequence) OVER (PARTITION BY e.sensor_id) THEN 'superseded' ELSE 'pending' END,
                       CASE WHEN e.sequence < max(e.sequence) OVER (PARTITION BY e.sensor_id) THEN now() END
                  FROM sensor_events e
                  JOIN client_sensors cs ON cs.sensor_id = e.sensor_id
                 WHERE e.id = ANY (?)
                RETURNING status)
                SELECT count(*) FILTER (WHERE status = 'pending') FROM created""")) {
            ps.setArray(1, c.createArrayOf("int8", eventIds.toArray()));
            try (var rs = ps.executeQuery()) {
                rs.next();
                pending = rs.getInt(1);
            }
        }
        try (PreparedStatement ps = c.prepareStatement("""
                WITH newest AS (
                    SELECT n.client_id, n.sensor_id, max(n.sequence) AS sequence
                      FROM notifications n
                     WHERE n.event_id = ANY (?)
                     GROUP BY n.client_id, n.sensor_id)
                UPDATE notifications o
                   SET status = 'superseded', finished_at = now()
                  FROM newest
                 WHERE o.client_id = newest.client_id AND o.sensor_id = newest.sensor_id
                   AND o.status = 'pending' AND o.sequence < newest.sequence""")) {
            ps.setArray(1, c.createArrayOf("int8", eventIds.toArray()));
            ps.executeUpdate();
        }
        return pending;
    }
}
