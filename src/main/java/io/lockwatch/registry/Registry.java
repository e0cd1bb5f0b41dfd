package io.lockwatch.registry;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

import io.lockwatch.notify.WebhookSigner;
import io.lockwatch.registry.RegistryViews.Client;
import io.lockwatch.registry.RegistryViews.ClientWithSecret;
import io.lockwatch.registry.RegistryViews.NotificationCounts;
import io.lockwatch.registry.RegistryViews.Overview;
import io.lockwatch.registry.RegistryViews.Sensor;
import io.lockwatch.registry.RegistryViews.SensorCounts;
import io.lockwatch.secrets.SecretCipher;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Sensors, clients and the links between them, in PostgreSQL, answered as {@link RegistryViews}.
 * A client's webhook secret leaves this class only from {@link #createClient} and {@link #rotateSecret}.
 */
public class Registry {

    /** Thrown for an id that is taken. */
    public static class AlreadyExists extends RuntimeException {
        public AlreadyExists(String message) {
            super(message);
        }
    }

    private static final String SENSOR_VIEW = """
            SELECT s.id, s.address, s.heartbeat_timeout_seconds, s.open_alarm_seconds, s.open_alarm_severity, s.profile,
                   s.device_id, st.state,
                   st.state_changed_at,
                   st.last_seen_at,
                   coalesce(st.connectivity, 'unknown') AS connectivity, coalesce(st.sequence, 0) AS sequence,
                   s.created_at, s.updated_at,
                   h.battery, h.battery_at, h.tamper, h.tamper_at, h.rssi, h.snr, h.signal_at
              FROM sensors s LEFT JOIN sensor_state st ON st.sensor_id = s.id
                   LEFT JOIN sensor_health h ON h.sensor_id = s.id
            """;

    private static final String CLIENT_VIEW = """
            SELECT id, name, url, delivery_mode, event_types, alarm_severities, max_events_per_request, enabled, paused_reason, paused_at, failing_since,
                   CASE WHEN previous_secret_until > now() THEN previous_secret_until END AS previous_secret_until,
                   created_at, updated_at
              FROM clients
            """;

    /**
     * How a client is to be sent its events; a null field is left as it is (a new client: the default), and
     * {@code eventTypes} is only applied with {@code eventTypesGiven} (null then means every type), and
     * {@code alarmSeverities} with {@code alarmSeveritiesGiven} (null: every severity).
     */
    public record DeliverySettings(String mode, boolean eventTypesGiven, List<String> eventTypes,
                                   Integer maxEventsPerRequest, boolean alarmSeveritiesGiven, List<String> alarmSeverities) {

        /** Alarm severities left as they are (a new client: all). */
        public DeliverySettings(String mode, boolean eventTypesGiven, List<String> eventTypes, Integer maxEventsPerRequest) {
            this(mode, eventTypesGiven, eventTypes, maxEventsPerRequest, false, null);
        }
    }

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;
    private final long defaultTimeoutSeconds;
    private final Integer defaultOpenAlarmSeconds;
    private final SecretCipher cipher;

    public Registry(JdbcTemplate jdbc, TransactionTemplate tx, long defaultTimeoutSeconds, SecretCipher cipher) {
        this(jdbc, tx, defaultTimeoutSeconds, null, cipher);
    }

    /** @param defaultOpenAlarmSeconds lockwatch.alarms.open-after; null: off for sensors without their own */
    public Registry(JdbcTemplate jdbc, TransactionTemplate tx, long defaultTimeoutSeconds, Integer defaultOpenAlarmSeconds,
                    SecretCipher cipher) {
        this.defaultOpenAlarmSeconds = defaultOpenAlarmSeconds;
        this.jdbc = jdbc;
        this.tx = tx;
        this.defaultTimeoutSeconds = defaultTimeoutSeconds;
        this.cipher = cipher;
    }

    long defaultTimeoutSeconds() {
        return defaultTimeoutSeconds;
    }

    Integer defaultOpenAlarmSeconds() {
        return defaultOpenAlarmSeconds;
    }

    // --- sensors

    public Sensor createSensor(String id, String address, Integer timeoutSeconds) {
        return createSensor(id, address, timeoutSeconds, null, null, null);
    }

    /** A device profile named by a sensor, with the sensor's id on that network. */
    public record Device(String profile, String deviceId) {
    }

    /**
     * @param openAlarmSeconds  the sensor's own open-door alarm threshold; null: the default
     * @param openAlarmSeverity the severity of its alarms; null: major
     * @param device            its device profile and id, or null
     */
    public Sensor createSensor(String id, String address, Integer timeoutSeconds, Integer openAlarmSeconds,
                               String openAlarmSeverity, Device device) {
        try {
            jdbc.update("""
                    INSERT INTO sensors (id, address, heartbeat_timeout_seconds, open_alarm_seconds, open_alarm_severity,
                                         profile, device_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?)""", id, address, timeoutSeconds, openAlarmSeconds, openAlarmSeverity,
                    device == null ? null : device.profile(), device == null ? null : device.deviceId());
        } catch (DuplicateKeyException e) {
            throw duplicate(e, id, device);
        }
        return sensor(id);
    }

    /** The sensor's id, or (by the index of devices) its device's, is another sensor's already. */
    private AlreadyExists duplicate(DuplicateKeyException e, String id, Device device) {
        if (device != null && String.valueOf(e.getMessage()).contains("sensors_by_device")) {
            return new AlreadyExists("device " + device.deviceId() + " is already another sensor's");
        }
        return new AlreadyExists("sensor " + id + " is already registered");
    }

    public Sensor sensor(String id) {
        List<Sensor> found = jdbc.query(SENSOR_VIEW + " WHERE s.id = ?", SENSOR, id);
        return found.isEmpty() ? null : found.get(0);
    }

    /**
     * Sensors by id after {@code after}; optionally only those with this connectivity, those whose id, or
     * address in any case, starts with {@code prefix} (V20's indexes), whose door is in {@code state}, and whose
     * device last said its battery at or below {@code batteryAtMost} percent.
     */
    public List<Sensor> sensors(String after, String connectivity, String prefix, Integer state, Integer batteryAtMost,
                                int limit) {
        String like = prefix == null ? null
                : prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%";
        return jdbc.query(SENSOR_VIEW + """
                 WHERE (?::text IS NULL OR s.id > ?)
                   AND (?::text IS NULL OR coalesce(st.connectivity, 'unknown') = ?)
                   AND (?::text IS NULL OR s.id LIKE ? ESCAPE '\\' OR lower(s.address) LIKE lower(?) ESCAPE '\\')
                   AND (?::integer IS NULL OR st.state = ?)
                   AND (?::real IS NULL OR h.battery <= ?)
                 ORDER BY s.id LIMIT ?""", SENSOR, after, after, connectivity, connectivity, like, like, like, state, state,
                batteryAtMost, batteryAtMost, limit);
    }

    /**
     * @param timeoutSeconds the sensor's own heartbeat timeout; null sets it back to the default
     * @return the sensor, or null if there is none
     */
    public Sensor updateSensor(String id, String address, boolean setTimeout, Integer timeoutSeconds) {
        return updateSensor(id, address, setTimeout, timeoutSeconds, false, null, false, null, false, null);
    }

    /**
     * @param openAlarmSeconds the sensor's own open-door alarm threshold, applied with {@code setOpenAlarm}; null
     *                         sets it back to the default
     * @return the sensor, or null if there is none
     */
    public Sensor updateSensor(String id, String address, boolean setTimeout, Integer timeoutSeconds,
                               boolean setOpenAlarm, Integer openAlarmSeconds, boolean setSeverity, String severity,
                               boolean setDevice, Device device) {
        Integer updated = tx.execute(status -> {
            int n;
            try {
                n = jdbc.update("""
                        UPDATE sensors SET address = coalesce(?, address),
                               heartbeat_timeout_seconds = CASE WHEN ? THEN ? ELSE heartbeat_timeout_seconds END,
                               open_alarm_seconds = CASE WHEN ? THEN ?::integer ELSE open_alarm_seconds END,
                               open_alarm_severity = CASE WHEN ? THEN ?::text ELSE open_alarm_severity END,
                               profile = CASE WHEN ? THEN ?::text ELSE profile END,
                               device_id = CASE WHEN ? THEN ?::text ELSE device_id END,
                               updated_at = now()
                         WHERE id = ?""", address, setTimeout, timeoutSeconds, setOpenAlarm, openAlarmSeconds, setSeverity,
                        severity, setDevice, device == null ? null : device.profile(), setDevice,
                        device == null ? null : device.deviceId(), id);
            } catch (DuplicateKeyException e) {
                throw duplicate(e, id, device);
            }
            if (n > 0 && setOpenAlarm) {
                // an open door without an alarm for this opening gets the deadline of its new threshold at once
                jdbc.update("""
                        UPDATE sensor_state st
                           SET open_alarm_seconds = ?::integer,
                               alarm_due_at = CASE
                                   WHEN st.state = 0 AND NOT EXISTS (SELECT 1 FROM alarms a
                                           WHERE a.sensor_id = st.sensor_id AND a.type = 'door_open_too_long' AND a.opened_at = st.state_changed_at)
                                   THEN st.state_changed_at + make_interval(secs => coalesce(?::integer, ?::integer))
                                   ELSE st.alarm_due_at END
                         WHERE st.sensor_id = ?""", openAlarmSeconds, openAlarmSeconds, defaultOpenAlarmSeconds, id);
            }
            if (n > 0 && (setTimeout || setDevice)) {
                // the deadline of an online sensor follows its new timeout (its own, else its profile's, as V49's
                // trigger has just copied it) at once; the stored last-seen time may lag the readings applied by up
                // to the largest tolerance, which ingest's next write of it takes back
                jdbc.update("""
                        UPDATE sensor_state
                           SET lost_deadline = last_seen_at + make_interval(secs => coalesce(heartbeat_timeout_seconds, ?) + ?)
                         WHERE sensor_id = ? AND last_seen_at IS NOT NULL""",
                        defaultTimeoutSeconds, io.lockwatch.ingest.LastSeenTolerance.MAX_MILLIS / 1000.0, id);
            }
            return n;
        });
        return updated == null || updated == 0 ? null : sensor(id);
    }

    /**
     * Ends the sensor's registration: its state, links, chains, schedule and credentials go with it (foreign keys),
     * its active alarms are closed each with its clearing, heard by the clients told of the alarm (V42), and what a
     * maintenance window held of it dropped (V41's trigger), and its notifications not yet sent are cancelled. Its
     * events, alarms and history stay. Registered again under the id, it is a new sensor whose events go on with the
     * id's numbering (V41), so no sequence names two events.
     */
    public boolean deleteSensor(String id) {
        return tx.execute(status -> {
            // its state locked first, as ingest and the alarm scan lock it, so that its active alarm stays so until
            // the delete closes it
            List<UUID> active = jdbc.queryForList("""
                    SELECT a.id FROM sensor_state s JOIN alarms a ON a.sensor_id = s.sensor_id AND a.cleared_at IS NULL
                     WHERE s.sensor_id = ? FOR UPDATE OF s""", UUID.class, id);
            cancelUndelivered("sensor_id = ?", id);
            boolean deleted = jdbc.update("DELETE FROM sensors WHERE id = ?", id) > 0;
            for (UUID alarm : active) { // one of each type at most
                for (Long clearing : jdbc.queryForList("SELECT id FROM sensor_events WHERE alarm_id = ? AND type IN "
                        + io.lockwatch.ingest.SensorEvent.ALARM_CLEARINGS_SQL, Long.class, alarm)) {
                    jdbc.execute((java.sql.Connection c) -> {
                        io.lockwatch.alarms.AlarmScan.deletedSensorsClearingHeard(c, clearing, null);
                        return null;
                    });
                }
            }
            return deleted;
        });
    }

    public List<Client> clientsOf(String sensorId) {
        return jdbc.query(CLIENT_VIEW + " WHERE id IN (SELECT client_id FROM client_sensors WHERE sensor_id = ?) ORDER BY name, id",
                CLIENT, sensorId);
    }

    /**
     * What an operator looks at first: sensors by connectivity and doors open, active alarms, and the notifications
     * waiting (pending, never tried), retrying (pending after a failed attempt) and dead. Counted, not estimated:
     * one pass over sensor_state and one over the notifications not finished.
     */
    public Overview overview() {
        return jdbc.queryForObject("""
                SELECT s.online, s.lost, s.unknown, s.open, s.total,
                       (SELECT count(*) FROM alarms WHERE cleared_at IS NULL) AS alarms,
                       n.pending, n.retrying, n.dead
                  FROM (SELECT count(*) FILTER (WHERE connectivity = 'online') AS online,
                               count(*) FILTER (WHERE connectivity = 'lost') AS lost,
                               count(*) FILTER (WHERE connectivity = 'unknown') AS unknown,
                               count(*) FILTER (WHERE state = 0) AS open,
                               count(*) AS total
                          FROM sensor_state) s,
                       (SELECT count(*) FILTER (WHERE status IN ('pending', 'delivering') AND attempts = 0) AS pending,
                               count(*) FILTER (WHERE status IN ('pending', 'delivering') AND attempts > 0) AS retrying,
                               count(*) FILTER (WHERE status = 'dead') AS dead
                          FROM notifications WHERE status IN ('pending', 'delivering', 'dead')) n""", (rs, i) -> {
            return new Overview(new SensorCounts(rs.getLong("total"), rs.getLong("online"), rs.getLong("lost"),
                    rs.getLong("unknown"), rs.getLong("open")), rs.getLong("alarms"),
                    new NotificationCounts(rs.getLong("pending"), rs.getLong("retrying"), rs.getLong("dead")), null,
                    java.time.Instant.now());
        });
    }

    // --- clients

    public ClientWithSecret createClient(String name, String url, DeliverySettings delivery) {
        String secret = WebhookSigner.newSecret();
        UUID id = jdbc.query(con -> {
            var ps = con.prepareStatement("""
                    INSERT INTO clients (name, url, webhook_secret, delivery_mode, event_types, max_events_per_request,
                                         alarm_severities)
                    VALUES (?, ?, ?, coalesce(?, 'every_event'), ?, coalesce(?, 1), ?) RETURNING id""");
            ps.setString(1, name);
            ps.setString(2, url);
            ps.setString(3, cipher.seal(secret));
            ps.setString(4, delivery.mode());
            ps.setArray(5, delivery.eventTypes() == null ? null : con.createArrayOf("text", delivery.eventTypes().toArray()));
            ps.setObject(6, delivery.maxEventsPerRequest(), java.sql.Types.INTEGER);
            ps.setArray(7, delivery.alarmSeverities() == null ? null
                    : con.createArrayOf("text", delivery.alarmSeverities().toArray()));
            return ps;
        }, (rs, i) -> rs.getObject(1, UUID.class)).get(0);
        return new ClientWithSecret(client(id), secret);
    }

    public Client client(UUID id) {
        List<Client> found = jdbc.query(CLIENT_VIEW + " WHERE id = ?", CLIENT, id);
        return found.isEmpty() ? null : found.get(0);
    }

    public List<Client> clients(UUID after, int limit) {
        return jdbc.query(CLIENT_VIEW + " WHERE (?::uuid IS NULL OR id > ?) ORDER BY id LIMIT ?", CLIENT, after, after, limit);
    }

    /** A client changed; one that turns to pulling its feed has what still waits to be posted to it cancelled. */
    public Client updateClient(UUID id, String name, String url, DeliverySettings delivery) {
        return tx.execute(status -> {
            Client client = changeClient(id, name, url, delivery);
            if (client != null && "pull".equals(delivery.mode())) {
                cancelUndelivered("client_id = ?", id);
            }
            return client;
        });
    }

    private Client changeClient(UUID id, String name, String url, DeliverySettings delivery) {
        int n = jdbc.update(con -> {
            var ps = con.prepareStatement("""
                    UPDATE clients SET name = coalesce(?, name), url = coalesce(?, url),
                           delivery_mode = coalesce(?, delivery_mode),
                           event_types = CASE WHEN ? THEN ? ELSE event_types END,
                           max_events_per_request = coalesce(?, max_events_per_request),
                           alarm_severities = CASE WHEN ? THEN ? ELSE alarm_severities END, updated_at = now()
                     WHERE id = ?""");
            ps.setString(1, name);
            ps.setString(2, url);
            ps.setString(3, delivery.mode());
            ps.setBoolean(4, delivery.eventTypesGiven());
            ps.setArray(5, delivery.eventTypes() == null ? null : con.createArrayOf("text", delivery.eventTypes().toArray()));
            ps.setObject(6, delivery.maxEventsPerRequest(), java.sql.Types.INTEGER);
            ps.setBoolean(7, delivery.alarmSeveritiesGiven());
            ps.setArray(8, delivery.alarmSeverities() == null ? null
                    : con.createArrayOf("text", delivery.alarmSeverities().toArray()));
            ps.setObject(9, id);
            return ps;
        });
        return n == 0 ? null : client(id);
    }

    /** A new secret; the one it replaces signs too for {@code grace}, so the client can switch over meanwhile. */
    public ClientWithSecret rotateSecret(UUID id, java.time.Duration grace) {
        String secret = WebhookSigner.newSecret();
        int n = jdbc.update("""
                UPDATE clients SET previous_secret = webhook_secret,
                       previous_secret_until = now() + make_interval(secs => ?), webhook_secret = ?, updated_at = now()
                 WHERE id = ?""", (double) grace.toSeconds(), cipher.seal(secret), id);
        if (n == 0) {
            return null;
        }
        return new ClientWithSecret(client(id), secret);
    }

    public boolean deleteClient(UUID id) {
        return tx.execute(status -> {
            cancelUndelivered("client_id = ?", id);
            return jdbc.update("DELETE FROM clients WHERE id = ?", id) > 0;
        });
    }

    /**
     * A page of the sensors linked to the client, by id after {@code after} (null: from the first), of this
     * connectivity and state if given; up to {@code limit}.
     */
    public List<Sensor> sensorsOf(UUID clientId, String after, String connectivity, Integer state, int limit) {
        return jdbc.query(SENSOR_VIEW + """
                 WHERE s.id IN (SELECT cs.sensor_id FROM client_sensors cs
                                 WHERE cs.client_id = ? AND (?::text IS NULL OR cs.sensor_id > ?))
                   AND (?::text IS NULL OR coalesce(st.connectivity, 'unknown') = ?)
                   AND (?::integer IS NULL OR st.state = ?)
                 ORDER BY s.id LIMIT ?""", SENSOR, clientId, after, after, connectivity, connectivity, state, state, limit);
    }

    public List<String> sensorIdsOf(UUID clientId) {
        return jdbc.queryForList("SELECT sensor_id FROM client_sensors WHERE client_id = ?", String.class, clientId);
    }

    // --- links

    /** @return false if the client or the sensor does not exist */
    public boolean link(UUID clientId, String sensorId) {
        if (client(clientId) == null || sensor(sensorId) == null) {
            return false;
        }
        jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?) ON CONFLICT DO NOTHING", clientId, sensorId);
        return true;
    }

    /** @return false if there was no such link */
    public boolean unlink(UUID clientId, String sensorId) {
        return tx.execute(status -> {
            cancelUndelivered("client_id = ? AND sensor_id = ?", clientId, sensorId);
            return jdbc.update("DELETE FROM client_sensors WHERE client_id = ? AND sensor_id = ?", clientId, sensorId) > 0;
        });
    }

    /** Pending notifications that will never be sent (their client or link is gone) say so at once. */
    private void cancelUndelivered(String where, Object... args) {
        jdbc.update("UPDATE notifications SET status = 'cancelled', finished_at = now() WHERE status = 'pending' AND "
                + where, args);
    }

    private static final RowMapper<Sensor> SENSOR = (rs, i) -> {
        short state = rs.getShort("state");
        Integer door = rs.wasNull() ? null : (int) state;
        return new Sensor(rs.getString("id"), rs.getString("address"), (Integer) rs.getObject("heartbeat_timeout_seconds"),
                (Integer) rs.getObject("open_alarm_seconds"), rs.getString("open_alarm_severity"), rs.getString("profile"),
                rs.getString("device_id"), door,
                time(rs, "state_changed_at"), time(rs, "last_seen_at"),
                rs.getString("connectivity"), rs.getLong("sequence"), time(rs, "created_at"), time(rs, "updated_at"),
                health(rs));
    };

    /** What the device last said of itself; null when it never said anything. */
    private static RegistryViews.DeviceHealth health(ResultSet rs) throws SQLException {
        Instant batteryAt = time(rs, "battery_at"), tamperAt = time(rs, "tamper_at"), signalAt = time(rs, "signal_at");
        if (batteryAt == null && tamperAt == null && signalAt == null) {
            return null;
        }
        float battery = rs.getFloat("battery");
        Double batteryPercent = rs.wasNull() ? null : io.lockwatch.ingest.DeviceHealth.asSaid(battery);
        boolean tamper = rs.getBoolean("tamper");
        Boolean tampered = rs.wasNull() ? null : tamper;
        short rssi = rs.getShort("rssi");
        Integer dbm = rs.wasNull() ? null : (int) rssi;
        float snr = rs.getFloat("snr");
        Double db = rs.wasNull() ? null : io.lockwatch.ingest.DeviceHealth.asSaid(snr);
        return new RegistryViews.DeviceHealth(batteryPercent, batteryAt, tampered, tamperAt, dbm, db, signalAt);
    }

    private static final RowMapper<Client> CLIENT = (rs, i) -> {
        java.sql.Array types = rs.getArray("event_types");
        java.sql.Array severities = rs.getArray("alarm_severities");
        return new Client(rs.getObject("id", UUID.class), rs.getString("name"), rs.getString("url"),
                rs.getString("delivery_mode"), types == null ? null : List.of((String[]) types.getArray()),
                severities == null ? null : List.of((String[]) severities.getArray()),
                rs.getInt("max_events_per_request"), rs.getBoolean("enabled"), rs.getString("paused_reason"), time(rs, "paused_at"), time(rs, "failing_since"),
                time(rs, "previous_secret_until"), time(rs, "created_at"), time(rs, "updated_at"));
    };

    static Instant time(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
