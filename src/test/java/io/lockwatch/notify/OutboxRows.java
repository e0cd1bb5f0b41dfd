package io.lockwatch.notify;

import java.util.UUID;

import org.springframework.jdbc.core.JdbcTemplate;

/** Clients, sensors and outbox rows written straight into the database, for tests that decide what a claim finds. */
final class OutboxRows {

    private final JdbcTemplate jdbc;

    OutboxRows(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    UUID client(String url) {
        return jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('test', ?, ?) RETURNING id",
                UUID.class, url, WebhookSigner.newSecret());
    }

    /** A new sensor linked to the given clients. */
    String sensor(UUID... clients) {
        String sensor = "C" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'Room')", sensor);
        for (UUID client : clients) {
            jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)", client, sensor);
        }
        return sensor;
    }

    /** A pending notification of the sensor's event {@code sequence}, due now. */
    UUID due(UUID client, String sensor, long sequence) {
        return notification(client, sensor, sequence, "pending", 0, null, "now()");
    }

    /**
     * A notification as the outbox would hold it, of the sensor's event {@code sequence} (one event, whichever of
     * its clients is notified of it); the times are SQL expressions of the test's own.
     */
    UUID notification(UUID client, String sensor, long sequence, String status, int attempts, String leaseUntil,
                      String nextAttemptAt) {
        Long event = jdbc.queryForObject("""
                INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at)
                VALUES (?, ?, 'sensor.state_changed', 1, 0, now())
                ON CONFLICT (sensor_id, sequence) DO UPDATE SET sequence = EXCLUDED.sequence RETURNING id""",
                Long.class, sensor, sequence);
        return jdbc.queryForObject("""
                INSERT INTO notifications (event_id, client_id, sensor_id, type, sequence, status, attempts,
                                           lease_until, next_attempt_at)
                VALUES (?, ?, ?, 'sensor.state_changed', ?, ?, ?, %s, %s) RETURNING id"""
                .formatted(leaseUntil == null ? "NULL" : leaseUntil, nextAttemptAt),
                UUID.class, event, client, sensor, sequence, status, attempts);
    }
}
