package io.lockwatch.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The heartbeat benchmark's measures of issue 40, beside its own:
 * <ul>
 *   <li>{@code --escalate S} (with {@code --alarm}): each open door's alarm escalates after S s to a client of its
 *       own chain; every step must be recorded once, and is timed from its due time;</li>
 *   <li>{@code --maintenance}: a maintenance window is open over the silent sensors from before they fall silent,
 *       with a client linked to them: nothing of their loss may be notified meanwhile; when the harness ends the
 *       window (after the restored ones came back), exactly one connection_lost per sensor still silent, timed
 *       from the window's end.</li>
 * </ul>
 * The step's client and the linked client are paused: their notifications are counted, not posted.
 */
final class HeartbeatExtras {

    private static final long POLL_MS = 100;

    private final HeartbeatOptions o;
    private final HeartbeatDatabase db;
    private final List<String> lines = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();

    HeartbeatExtras(HeartbeatOptions o, HeartbeatDatabase db) {
        this.o = o;
        this.db = db;
    }

    /** The chain, or the window and the linked client, over the chosen sensors. */
    void prepare(List<String> chosen) throws SQLException {
        if (o.escalate() > 0) {
            try (Connection c = db.connect()) {
                String client = pausedClient(c, "bench guard");
                try (PreparedStatement ps = c.prepareStatement("""
                        INSERT INTO sensor_escalation_steps (sensor_id, step, after_seconds, client_id)
                        SELECT unnest(?::varchar[]), 1, ?, ?::uuid""")) {
                    ps.setArray(1, c.createArrayOf("varchar", chosen.toArray()));
                    ps.setInt(2, o.escalate());
                    ps.setString(3, client);
                    ps.executeUpdate();
                }
            }
        }
        if (o.maintenance()) {
            try (Connection c = db.connect()) {
                String client = pausedClient(c, "bench site");
                try (PreparedStatement link = c.prepareStatement(
                        "INSERT INTO client_sensors (client_id, sensor_id) SELECT ?::uuid, unnest(?::varchar[])");
                     PreparedStatement window = c.prepareStatement("""
                             WITH w AS (INSERT INTO maintenance_windows (starts_at, ends_at, reason, sensor_ids)
                                        VALUES (now(), now() + interval '1 day', 'bench', ?::varchar[]) RETURNING id)
                             INSERT INTO maintenance_window_sensors (window_id, sensor_id)
                             SELECT w.id, unnest(?::varchar[]) FROM w""")) {
                    link.setString(1, client);
                    link.setArray(2, c.createArrayOf("varchar", chosen.toArray()));
                    link.executeUpdate();
                    window.setArray(1, c.createArrayOf("varchar", chosen.toArray()));
                    window.setArray(2, c.createArrayOf("varchar", chosen.toArray()));
                    window.executeUpdate();
                }
            }
        }
    }

    /** With --escalate: waits for every step (or gives up after --max-wait past the last due time), and times them. */
    void afterRaised(int doors) throws Exception {
        if (o.escalate() <= 0) {
            return;
        }
        long giveUpAt = System.currentTimeMillis() + (o.escalate() + o.maxWait()) * 1000L;
        long sent;
        while ((sent = scalar("SELECT count(*) FROM alarm_escalations WHERE sent_at IS NOT NULL")) < doors
                && System.currentTimeMillis() < giveUpAt) {
            Thread.sleep(POLL_MS);
        }
        double[] late = seconds("""
                SELECT extract(epoch FROM ev.recorded_at - e.due_at) FROM alarm_escalations e
                  JOIN sensor_events ev ON ev.id = e.event_id""");
        long events = scalar("SELECT count(*) FROM sensor_events WHERE type = 'sensor.alarm_escalated'");
        long distinct = scalar("SELECT count(DISTINCT alarm_id) FROM sensor_events WHERE type = 'sensor.alarm_escalated'");
        long notified = scalar("SELECT count(*) FROM notifications WHERE type = 'sensor.alarm_escalated'");
        if (sent != doors || events != doors || distinct != doors || notified != doors) {
            problems.add(String.format(Locale.US, "escalation: %,d steps sent, %,d events of %,d alarms, %,d notifications; "
                    + "expected %,d of each", sent, events, distinct, notified, doors));
        }
        lines.add(String.format(Locale.US, "escalation steps (after %d s), recorded after their due time: n=%,d  p50 %.2f s  "
                        + "p99 %.2f s  max %.2f s   target p99 <= 15 s: %s; %,d events, each alarm once, %,d notifications",
                o.escalate(), late.length, pct(late, 50), pct(late, 99), pct(late, 100),
                late.length > 0 && pct(late, 99) <= 15 ? "MET" : "MISSED", events, notified));
    }

    /**
     * With --maintenance: nothing notified of the window's sensors' losses yet; then ends the window and waits
     * until each sensor still lost has had its one connection_lost sent, timed from the end.
     */
    void afterRestored(int stillLost, int restored) throws Exception {
        if (!o.maintenance()) {
            return;
        }
        long during = scalar("""
                SELECT count(*) FROM notifications WHERE type IN ('sensor.connection_lost', 'sensor.connection_restored')""");
        long held = scalar("SELECT count(*) FROM maintenance_held");
        if (during != 0) {
            problems.add(during + " connection events notified while the window was open, expected none");
        }
        if (held != stillLost) {
            problems.add(String.format(Locale.US, "the window held %,d losses before its end, expected %,d (the sensors "
                    + "still silent)", held, stillLost));
        }
        long endedAt = System.currentTimeMillis();
        scalar("WITH e AS (UPDATE maintenance_windows SET ended_at = now() RETURNING 1) SELECT count(*) FROM e");
        long giveUpAt = endedAt + o.maxWait() * 1000L;
        long released;
        while ((released = scalar("""
                SELECT count(*) FROM sensor_events WHERE type = 'sensor.connection_lost' AND NOT maintenance""")) < stillLost
                && System.currentTimeMillis() < giveUpAt) {
            Thread.sleep(POLL_MS);
        }
        long lastSeen = System.currentTimeMillis();
        double[] after = seconds("""
                SELECT extract(epoch FROM recorded_at) - (SELECT extract(epoch FROM ended_at) FROM maintenance_windows LIMIT 1)
                  FROM sensor_events WHERE type = 'sensor.connection_lost' AND NOT maintenance""");
        long notified = scalar("SELECT count(*) FROM notifications WHERE type = 'sensor.connection_lost'");
        long sensors = scalar("SELECT count(DISTINCT sensor_id) FROM notifications WHERE type = 'sensor.connection_lost'");
        long restoredSent = scalar("SELECT count(*) FROM notifications WHERE type = 'sensor.connection_restored'");
        if (released != stillLost || notified != stillLost || sensors != stillLost || restoredSent != 0) {
            problems.add(String.format(Locale.US, "at the window's end: %,d released, %,d notified for %,d sensors, %,d "
                    + "restorations notified; expected %,d, %,d, %,d and none", released, notified, sensors, restoredSent,
                    stillLost, stillLost, stillLost));
        }
        lines.add(String.format(Locale.US, "maintenance window over the silent sensors: %,d connection events notified "
                        + "while it was open; at its end %,d connection_lost sent (one per sensor still silent, %,d "
                        + "restorations not sent), recorded p50 %.2f s, max %.2f s after it ended (seen %.1f s after)   "
                        + "target all within 30 s: %s", during, notified, restored,
                pct(after, 50), pct(after, 100), (lastSeen - endedAt) / 1e3,
                after.length > 0 && pct(after, 100) <= 30 ? "MET" : "MISSED"));
    }

    boolean ok() {
        return problems.isEmpty();
    }

    List<String> lines() {
        List<String> all = new ArrayList<>(lines);
        problems.forEach(p -> all.add("  problem: " + p));
        return all;
    }

    private static String pausedClient(Connection c, String name) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO clients (name, url, webhook_secret, enabled, paused_reason, paused_at)
                VALUES (?, 'http://127.0.0.1:9/bench', 'whsec_bench', false, 'bench: counted, not posted', now())
                RETURNING id::text""")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getString(1);
            }
        }
    }

    private long scalar(String sql) throws SQLException {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private double[] seconds(String sql) throws SQLException {
        List<Double> values = new ArrayList<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                values.add(rs.getDouble(1));
            }
        }
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(sorted);
        return sorted;
    }

    private static double pct(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int i = (int) Math.ceil(p / 100 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }
}
