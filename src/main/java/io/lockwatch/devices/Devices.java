package io.lockwatch.devices;

import java.security.SecureRandom;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.security.crypto.password.DelegatingPasswordEncoder;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.crypto.password.Pbkdf2PasswordEncoder;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Gateways, and the credentials of sensors and gateways, in PostgreSQL. A credential's secret leaves this class only
 * from {@link #createCredential}, once; what is kept is a salted hash.
 */
public class Devices {

    /** Thrown for a gateway id that is taken. */
    public static class AlreadyExists extends RuntimeException {
        AlreadyExists(String message) {
            super(message);
        }
    }

    /** Thrown when a gateway is given sensors that are not registered: the first few of them. */
    public static class UnknownSensors extends RuntimeException {
        public final List<String> sensors;

        UnknownSensors(List<String> sensors) {
            super("not registered: " + String.join(", ", sensors));
            this.sensors = sensors;
        }
    }

    /** A gateway; {@code sensors} is null in a listing, which gives their number only. */
    public record Gateway(String id, String login, String description, int sensorCount, List<String> sensors,
                          Instant createdAt, Instant updatedAt) {
    }

    /** A credential without its secret: {@code active}, {@code expiring} (replaced, in its grace), {@code expired} or {@code revoked}. */
    public record Credential(UUID id, String login, String status, Instant createdAt, Instant expiresAt, Instant revokedAt) {
    }

    /** A new credential and its secret in clear: the only time the secret is seen. */
    public record NewCredential(Credential credential, String secret) {
    }

    /** A secret made for a credential, and the hash that is all of it kept. */
    public record Secret(String secret, String hash) {
    }

    /*
     * The secrets are 256 random bits made here, never chosen by a person: no dictionary holds them, so stretching
     * buys nothing against a stolen table, and a device's login must stay cheap (a fleet reconnecting after an
     * outage logs in all at once). A salt keeps two equal hashes from saying anything. The id in front of each hash
     * lets a later release change the scheme while the old hashes still verify.
     */
    private static final String ENCODING = "pbkdf2-sha256-1000";
    private static final PasswordEncoder ENCODER = new DelegatingPasswordEncoder(ENCODING, Map.of(ENCODING,
            new Pbkdf2PasswordEncoder("", 16, 1000, Pbkdf2PasswordEncoder.SecretKeyFactoryAlgorithm.PBKDF2WithHmacSHA256)));
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String LIVE = "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())";

    private final JdbcTemplate jdbc;
    private final TransactionTemplate tx;

    public Devices(JdbcTemplate jdbc, TransactionTemplate tx) {
        this.jdbc = jdbc;
        this.tx = tx;
    }

    // --- gateways

    public Gateway createGateway(String id, String description, List<String> sensors) {
        return tx.execute(status -> {
            try {
                jdbc.update("INSERT INTO gateways (id, description) VALUES (?, ?)", id, description);
            } catch (DuplicateKeyException e) {
                throw new AlreadyExists("gateway " + id + " is already registered");
            }
            replaceSensors(id, sensors == null ? List.of() : sensors);
            return gateway(id);
        });
    }

    public Gateway gateway(String id) {
        List<Gateway> found = jdbc.query("""
                SELECT g.*, (SELECT count(*) FROM gateway_sensors gs WHERE gs.gateway_id = g.id) AS sensor_count
                  FROM gateways g WHERE g.id = ?""", (rs, i) -> gateway(rs, sensorsOf(id)), id);
        return found.isEmpty() ? null : found.get(0);
    }

    public List<Gateway> gateways(String after, int limit) {
        return jdbc.query("""
                SELECT g.*, (SELECT count(*) FROM gateway_sensors gs WHERE gs.gateway_id = g.id) AS sensor_count
                  FROM gateways g WHERE (?::text IS NULL OR g.id > ?) ORDER BY g.id LIMIT ?""",
                (rs, i) -> gateway(rs, null), after, after, limit);
    }

    /** A null description or sensor list is left as it is; a list given replaces the gateway's. Null if no such gateway. */
    public Gateway updateGateway(String id, String description, List<String> sensors) {
        return tx.execute(status -> {
            int n = jdbc.update("UPDATE gateways SET description = coalesce(?, description), updated_at = now() WHERE id = ?",
                    description, id);
            if (n == 0) {
                return null;
            }
            if (sensors != null) {
                replaceSensors(id, sensors);
            }
            return gateway(id);
        });
    }

    /** Its credentials go with it. */
    public boolean deleteGateway(String id) {
        return jdbc.update("DELETE FROM gateways WHERE id = ?", id) > 0;
    }

    private void replaceSensors(String gatewayId, List<String> sensors) {
        String[] ids = new LinkedHashSet<>(sensors).toArray(String[]::new);
        List<String> unknown = jdbc.queryForList("""
                SELECT id FROM unnest(?::text[]) WITH ORDINALITY AS given (id, n)
                 WHERE NOT EXISTS (SELECT 1 FROM sensors s WHERE s.id = given.id) ORDER BY n LIMIT 10""",
                String.class, (Object) ids);
        if (!unknown.isEmpty()) {
            throw new UnknownSensors(unknown);
        }
        jdbc.update("DELETE FROM gateway_sensors WHERE gateway_id = ? AND sensor_id <> ALL (?::text[])", gatewayId, ids);
        jdbc.update("""
                INSERT INTO gateway_sensors (gateway_id, sensor_id) SELECT ?, unnest(?::text[])
                    ON CONFLICT DO NOTHING""", gatewayId, ids);
    }

    private List<String> sensorsOf(String gatewayId) {
        return jdbc.queryForList("SELECT sensor_id FROM gateway_sensors WHERE gateway_id = ? ORDER BY sensor_id",
                String.class, gatewayId);
    }

    private static Gateway gateway(ResultSet rs, List<String> sensors) throws SQLException {
        String id = rs.getString("id");
        return new Gateway(id, DeviceLogin.ofGateway(id).text(), rs.getString("description"), rs.getInt("sensor_count"),
                sensors, time(rs, "created_at"), time(rs, "updated_at"));
    }

    // --- credentials

    /** The holder's credentials, newest first; null if the sensor or gateway does not exist. */
    public List<Credential> credentials(DeviceLogin holder) {
        if (!exists(holder)) {
            return null;
        }
        return jdbc.query("SELECT * FROM device_credentials WHERE login = ? ORDER BY created_at DESC, id",
                CREDENTIAL, holder.text());
    }

    /**
     * A new credential for the holder; those it had still work for {@code grace} (or less, if they were to end
     * sooner), so that a device can be given the new one meanwhile. Null if the sensor or gateway does not exist.
     */
    public NewCredential createCredential(DeviceLogin holder, Duration grace) {
        Secret made = newSecret();
        String secret = made.secret(), hash = made.hash();
        return tx.execute(status -> {
            if (!exists(holder)) {
                return null;
            }
            jdbc.update("UPDATE device_credentials SET expires_at = least(coalesce(expires_at, 'infinity'), "
                    + "now() + make_interval(secs => ?)) WHERE login = ? AND " + LIVE, (double) grace.toSeconds(), holder.text());
            UUID id = jdbc.queryForObject("""
                    INSERT INTO device_credentials (login, sensor_id, gateway_id, secret_hash) VALUES (?, ?, ?, ?)
                    RETURNING id""", UUID.class, holder.text(), holder.sensorId(), holder.gatewayId(), hash);
            Credential created = jdbc.queryForObject("SELECT * FROM device_credentials WHERE id = ?", CREDENTIAL, id);
            return new NewCredential(created, secret);
        });
    }

    /** A fresh secret and its hash, for a credential about to be stored. */
    public static Secret newSecret() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        String secret = "lwd_" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        return new Secret(secret, ENCODER.encode(secret));
    }

    /** At once, for whatever logs in with it from now on; false if the holder has no such credential. */
    public boolean revokeCredential(DeviceLogin holder, UUID id) {
        return jdbc.update("UPDATE device_credentials SET revoked_at = coalesce(revoked_at, now()) WHERE login = ? AND id = ?",
                holder.text(), id) > 0;
    }

    /** Whether the secret is that of a live credential of this login. */
    public boolean authenticate(String login, String secret) {
        if (DeviceLogin.parse(login) == null || secret == null || secret.isEmpty()) {
            return false;
        }
        List<String> hashes = jdbc.queryForList("SELECT secret_hash FROM device_credentials WHERE login = ? AND " + LIVE,
                String.class, login);
        boolean matched = false;
        for (String hash : hashes) {
            matched |= ENCODER.matches(secret, hash);
        }
        return matched;
    }

    /** Whether the device has a live credential and the sensor is its own, or one of its gateway's. */
    public boolean mayReport(DeviceLogin device, String sensorId) {
        boolean owns = device.gateway()
                ? Boolean.TRUE.equals(jdbc.queryForObject(
                        "SELECT EXISTS (SELECT 1 FROM gateway_sensors WHERE gateway_id = ? AND sensor_id = ?)",
                        Boolean.class, device.gatewayId(), sensorId))
                : device.sensorId().equals(sensorId);
        return owns && live(device);
    }

    /** Whether the device has a live credential. */
    public boolean live(DeviceLogin device) {
        return Boolean.TRUE.equals(jdbc.queryForObject(
                "SELECT EXISTS (SELECT 1 FROM device_credentials WHERE login = ? AND " + LIVE + ")", Boolean.class, device.text()));
    }

    /**
     * Of these sensors, those the device may report for by the registry alone (its own, or its gateway's), whatever
     * its credentials now: what it published was let in by the broker, which checked them then.
     */
    public Set<String> ownedAmong(DeviceLogin device, Collection<String> sensorIds) {
        if (!device.gateway()) {
            return sensorIds.contains(device.sensorId()) ? Set.of(device.sensorId()) : Set.of();
        }
        return new HashSet<>(jdbc.queryForList(
                "SELECT sensor_id FROM gateway_sensors WHERE gateway_id = ? AND sensor_id = ANY (?::text[])",
                String.class, device.gatewayId(), sensorIds.toArray(String[]::new)));
    }

    private boolean exists(DeviceLogin holder) {
        return holder.gateway()
                ? Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM gateways WHERE id = ?)", Boolean.class, holder.gatewayId()))
                : Boolean.TRUE.equals(jdbc.queryForObject("SELECT EXISTS (SELECT 1 FROM sensors WHERE id = ?)", Boolean.class, holder.sensorId()));
    }

    private static final RowMapper<Credential> CREDENTIAL = (rs, i) -> {
        Instant now = Instant.now();
        Instant expires = time(rs, "expires_at"), revoked = time(rs, "revoked_at");
        String status = revoked != null ? "revoked"
                : expires == null ? "active"
                : expires.isAfter(now) ? "expiring" : "expired";
        return new Credential(rs.getObject("id", UUID.class), rs.getString("login"), status, time(rs, "created_at"),
                expires, revoked);
    };

    private static Instant time(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
