package io.lockwatch.alarms;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Alarms as the API shows them: listed newest first, read one by one with their escalation, acknowledged by an
 * operator; and the escalation chain of each sensor.
 */
public class AlarmStore {

    /** What acknowledging found. */
    public enum Acknowledged { DONE, NOT_FOUND, ALREADY }

    /** A step of a sensor's chain: after this long unacknowledged, the alarm is sent to this client. */
    public record Step(int step, int afterSeconds, UUID clientId) {
    }

    /**
     * A step of an alarm's escalation: of the sensor's chain, or ({@code chainClientId}) of that linked client's;
     * {@code state} is {@code pending} (not due yet, or about to be sent), {@code sent} or {@code stopped} (the alarm
     * was acknowledged or cleared first).
     */
    public record Escalation(UUID chainClientId, int step, int afterSeconds, UUID clientId, String state, Instant dueAt,
                             Instant sentAt, Instant stoppedAt) {
    }

    /** Thrown for a chain that names a client that does not exist: its step's number. */
    public static class UnknownClient extends RuntimeException {
        public final int step;

        UnknownClient(int step, UUID client) {
            super("client " + client + " does not exist");
            this.step = step;
        }
    }

    /**
     * An alarm, the contract's Alarm: {@code active} until cleared (the door closes, the battery is back, the
     * tamper switch is closed again); a door's {@code thresholdSeconds} and {@code openSeconds}, how long it was open,
     * known once it closed; a low battery's {@code battery} and {@code thresholdPercent}.
     */
    public record Alarm(UUID id, String sensorId, String type, String severity, boolean active, Instant openedAt,
                        Integer thresholdSeconds, Double battery, Integer thresholdPercent, Instant raisedAt,
                        Instant clearedAt, Double openSeconds, Instant acknowledgedAt, String acknowledgedBy,
                        String comment, List<Escalation> escalation) {

        /** The same alarm with only these of its steps: as a client is shown it. */
        public Alarm withEscalation(List<Escalation> steps) {
            return new Alarm(id, sensorId, type, severity, active, openedAt, thresholdSeconds, battery, thresholdPercent,
                    raisedAt, clearedAt, openSeconds, acknowledgedAt, acknowledgedBy, comment, steps);
        }
    }

    /** Thrown when a client's key would replace a chain of its link that an operator set to name other clients. */
    public static class SetByAnOperator extends RuntimeException {
        SetByAnOperator() {
            super("this chain has steps only an operator may set (to other clients): only an operator may replace it");
        }
    }

    private static final String VIEW = """
            SELECT a.id, a.sensor_id, a.type, a.severity, a.opened_at, a.threshold_seconds, a.battery, a.threshold_percent,
                   a.raised_at, a.cleared_at,
                   a.acknowledged_at, a.acknowledged_by, a.ack_comment,
                   (SELECT json_agg(json_build_object('chain_client_id', e.link_client_id, 'step', e.step,
                                                      'after_seconds', e.after_seconds, 'client_id', e.client_id,
                                                      'due_at', e.due_at, 'sent_at', e.sent_at,
                                                      'stopped_at', e.stopped_at)
                                    ORDER BY e.link_client_id NULLS FIRST, e.step)
                      FROM alarm_escalations e WHERE e.alarm_id = a.id)::text AS escalation
              FROM alarms a
            """;

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    public AlarmStore(JdbcTemplate jdbc, TransactionTemplate tx) {
        this.jdbc = jdbc;
        this.tx = tx;
    }

    /**
     * A page of alarms, newest raised first, up to {@code limit + 1} (the extra one says a next page exists).
     *
     * @param active null: all; true: not cleared yet; false: cleared
     * @param client only alarms of sensors linked to this client now
     * @param after  the (raised_at, id) of the last alarm of the previous page, or null
     */
    public List<Alarm> list(String sensor, UUID client, Boolean active, long from, long to, Timestamp afterRaisedAt,
                            UUID afterId, int limit) {
        return jdbc.query(VIEW + """
                 WHERE (?::text IS NULL OR a.sensor_id = ?)
                   AND (?::uuid IS NULL OR EXISTS (SELECT 1 FROM client_sensors cs
                                                    WHERE cs.client_id = ? AND cs.sensor_id = a.sensor_id))
                   AND (?::boolean IS NULL OR (a.cleared_at IS NULL) = ?)
                   AND a.raised_at >= ? AND a.raised_at < ?
                   AND (?::timestamptz IS NULL OR (a.raised_at, a.id) < (?::timestamptz, ?::uuid))
                 ORDER BY a.raised_at DESC, a.id DESC
                 LIMIT ?""", ALARM, sensor, sensor, client, client, active, active, new Timestamp(from),
                new Timestamp(to), afterRaisedAt, afterRaisedAt, afterId, limit + 1);
    }

    /** @return the alarm, or null */
    public Alarm find(UUID id) {
        List<Alarm> found = jdbc.query(VIEW + " WHERE a.id = ?", ALARM, id);
        return found.isEmpty() ? null : found.get(0);
    }

    /** Acknowledges an alarm once, active or cleared: who, and what they say. */
    public Acknowledged acknowledge(UUID id, String by, String comment) {
        return tx.execute(status -> {
            List<Boolean> acknowledged = jdbc.query("SELECT acknowledged_at IS NOT NULL FROM alarms WHERE id = ? FOR UPDATE",
                    (rs, i) -> rs.getBoolean(1), id);
            if (acknowledged.isEmpty()) {
                return Acknowledged.NOT_FOUND;
            }
            if (acknowledged.get(0)) {
                return Acknowledged.ALREADY;
            }
            jdbc.update("UPDATE alarms SET acknowledged_at = now(), acknowledged_by = ?, ack_comment = ? WHERE id = ?",
                    by, comment, id);
            // the chain stops here: no step is sent after this, and a sent one still waiting for its client is not
            jdbc.update("""
                    UPDATE alarm_escalations SET stopped_at = now()
                     WHERE alarm_id = ? AND sent_at IS NULL AND stopped_at IS NULL""", id);
            jdbc.update("""
                    UPDATE notifications n SET status = 'cancelled', finished_at = now()
                      FROM alarm_escalations e
                     WHERE e.alarm_id = ? AND n.event_id = e.event_id AND n.status = 'pending'""", id);
            return Acknowledged.DONE;
        });
    }

    /** The sensor's chain, in step order; null if there is no such sensor. */
    public List<Step> chain(String sensorId) {
        if (!Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM sensors WHERE id = ?)", Boolean.class,
                sensorId))) {
            return null;
        }
        return jdbc.query("SELECT step, after_seconds, client_id FROM sensor_escalation_steps WHERE sensor_id = ? ORDER BY step",
                STEP, sensorId);
    }

    /** The chain of a client's link to a sensor, in step order; null if the client is not linked to it. */
    public List<Step> linkChain(UUID clientId, String sensorId) {
        if (!linked(clientId, sensorId, false)) {
            return null;
        }
        return jdbc.query("""
                SELECT step, after_seconds, to_client_id FROM link_escalation_steps
                 WHERE client_id = ? AND sensor_id = ? ORDER BY step""", STEP, clientId, sensorId);
    }

    /**
     * Replaces the sensor's chain (empty: none) for the alarms raised from now on; an alarm already raised keeps the
     * chain it was raised with. Null if there is no such sensor.
     */
    public List<Step> replaceChain(String sensorId, List<Step> steps) {
        return tx.execute(status -> {
            if (jdbc.queryForList("SELECT id FROM sensors WHERE id = ? FOR UPDATE", String.class, sensorId).isEmpty()) {
                return null;
            }
            clientsExist(steps);
            jdbc.update("DELETE FROM sensor_escalation_steps WHERE sensor_id = ?", sensorId);
            jdbc.batchUpdate("INSERT INTO sensor_escalation_steps (sensor_id, step, after_seconds, client_id) VALUES (?, ?, ?, ?)",
                    steps.stream().map(s -> new Object[] {sensorId, s.step(), s.afterSeconds(), s.clientId()}).toList());
            return chain(sensorId);
        });
    }

    /**
     * Replaces the chain of a client's link to a sensor (empty: none), as {@link #replaceChain} does the sensor's;
     * unlinking removes it. Null if the client is not linked to the sensor.
     *
     * @param byItsClient by the client's own key, which may not take away the steps an operator set to other clients
     *                    (it is not shown them either)
     */
    public List<Step> replaceLinkChain(UUID clientId, String sensorId, List<Step> steps, boolean byItsClient) {
        return tx.execute(status -> {
            if (!linked(clientId, sensorId, true)) {
                return null;
            }
            if (byItsClient && !jdbc.queryForList("""
                    SELECT 1 FROM link_escalation_steps WHERE client_id = ? AND sensor_id = ? AND to_client_id <> ?
                     LIMIT 1""", Integer.class, clientId, sensorId, clientId).isEmpty()) {
                throw new SetByAnOperator();
            }
            clientsExist(steps);
            jdbc.update("DELETE FROM link_escalation_steps WHERE client_id = ? AND sensor_id = ?", clientId, sensorId);
            jdbc.batchUpdate("""
                    INSERT INTO link_escalation_steps (client_id, sensor_id, step, after_seconds, to_client_id)
                    VALUES (?, ?, ?, ?, ?)""",
                    steps.stream().map(s -> new Object[] {clientId, sensorId, s.step(), s.afterSeconds(), s.clientId()})
                            .toList());
            return linkChain(clientId, sensorId);
        });
    }

    private boolean linked(UUID clientId, String sensorId, boolean lock) {
        return !jdbc.queryForList("SELECT 1 FROM client_sensors WHERE client_id = ? AND sensor_id = ?"
                + (lock ? " FOR UPDATE" : ""), Integer.class, clientId, sensorId).isEmpty();
    }

    private void clientsExist(List<Step> steps) {
        for (Step s : steps) {
            if (!Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM clients WHERE id = ?)",
                    Boolean.class, s.clientId()))) {
                throw new UnknownClient(s.step(), s.clientId());
            }
        }
    }

    private static final RowMapper<Step> STEP = (rs, i) -> new Step(rs.getInt(1), rs.getInt(2), rs.getObject(3, UUID.class));

    private static final com.fasterxml.jackson.databind.ObjectMapper JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    private static final RowMapper<Alarm> ALARM = (rs, i) -> {
        Timestamp opened = rs.getTimestamp("opened_at");
        Timestamp cleared = rs.getTimestamp("cleared_at");
        Integer threshold = rs.getObject("threshold_seconds", Integer.class);
        return new Alarm(rs.getObject("id", UUID.class), rs.getString("sensor_id"), rs.getString("type"),
                rs.getString("severity"), cleared == null, opened.toInstant(), threshold,
                rs.getObject("battery") == null ? null : io.lockwatch.ingest.DeviceHealth.asSaid(rs.getFloat("battery")), rs.getObject("threshold_percent", Integer.class),
                time(rs, "raised_at"), cleared == null ? null : cleared.toInstant(),
                cleared == null || threshold == null ? null : (cleared.getTime() - opened.getTime()) / 1000.0,
                time(rs, "acknowledged_at"),
                rs.getString("acknowledged_by"), rs.getString("ack_comment"), escalation(rs.getString("escalation")));
    };

    private static List<Escalation> escalation(String json) throws SQLException {
        if (json == null) {
            return List.of();
        }
        try {
            List<Escalation> steps = new java.util.ArrayList<>();
            for (JsonNode e : JSON.readTree(json)) {
                Instant sent = instant(e.get("sent_at")), stopped = instant(e.get("stopped_at"));
                JsonNode chainOf = e.get("chain_client_id");
                steps.add(new Escalation(chainOf == null || chainOf.isNull() ? null : UUID.fromString(chainOf.asText()),
                        e.get("step").asInt(), e.get("after_seconds").asInt(),
                        UUID.fromString(e.get("client_id").asText()),
                        sent != null ? "sent" : stopped != null ? "stopped" : "pending", instant(e.get("due_at")), sent,
                        stopped));
            }
            return steps;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new SQLException("an alarm's escalation is not the JSON its query makes", e);
        }
    }

    /** PostgreSQL's JSON form of a timestamptz ("2026-11-28T07:42:49.123456+00:00"). */
    private static Instant instant(JsonNode value) {
        return value == null || value.isNull() ? null
                : java.time.OffsetDateTime.parse(value.asText()).toInstant();
    }

    private static Instant time(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
