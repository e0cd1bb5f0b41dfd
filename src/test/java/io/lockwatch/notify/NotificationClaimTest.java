package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import org.apache.camel.CamelContext;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What a claim takes from the outbox. The routes that claim are stopped, so only the test claims; each test starts
 * from an outbox with nothing due or in flight.
 */
@CamelSpringBootTest
@SpringBootTest(properties = "lockwatch.notify.poll-interval=600000")
class NotificationClaimTest {

    private static final Duration LEASE = Duration.ofSeconds(25);

    @Autowired NotificationStore store;
    @Autowired JdbcTemplate jdbc;
    @Autowired CamelContext camel;

    @BeforeEach
    void onlyTheTestClaims() throws Exception {
        camel.getRouteController().stopRoute("due-notifications-are-claimed-on-a-timer");
        camel.getRouteController().stopRoute("due-notifications-are-claimed-when-recorded");
        jdbc.update("UPDATE notifications SET status = 'delivered', lease_until = NULL WHERE status IN ('pending', 'delivering')");
    }

    @Test
    void aNotificationWhoseLeaseRanOutIsClaimedAgainAsItsNextAttempt() {
        UUID client = newClient();
        String sensor = newSensor(client);
        UUID crashed = notification(client, sensor, 1, "delivering", 1, "now() - interval '1 second'");

        List<Delivery> claimed = store.claim(10, Set.of(), LEASE);

        assertThat(claimed).extracting(Delivery::id, Delivery::attempt).containsExactly(tuple(crashed, 2));
        assertThat(jdbc.queryForObject("SELECT status FROM notifications WHERE id = ?", String.class, crashed))
                .isEqualTo("delivering");
        assertThat(jdbc.queryForObject("SELECT lease_until > now() + interval '20 seconds' FROM notifications WHERE id = ?",
                Boolean.class, crashed)).as("a new lease").isTrue();
    }

    @Test
    void aNotificationWaitsWhileAnOlderOneOfItsSensorIsStillBeingSentToItsClient() {
        UUID client = newClient();
        UUID otherClient = newClient();
        String sensor = newSensor(client, otherClient);
        UUID inFlight = notification(client, sensor, 1, "delivering", 1, "now() + interval '20 seconds'");
        UUID newer = notification(client, sensor, 2, "pending", 0, null);
        UUID toTheOther = notification(otherClient, sensor, 2, "pending", 0, null);

        assertThat(store.claim(10, Set.of(), LEASE)).extracting(Delivery::id)
                .as("only the other client's: this client still has the older event in flight")
                .containsExactly(toTheOther);

        jdbc.update("UPDATE notifications SET status = 'delivered', lease_until = NULL WHERE id = ?", inFlight);
        assertThat(store.claim(10, Set.of(), LEASE)).extracting(Delivery::id).containsExactly(newer);
    }

    @Test
    void anOlderOneWhoseLeaseRanOutHoldsNothingBackAndGoesFirst() {
        UUID client = newClient();
        String sensor = newSensor(client);
        UUID crashed = notification(client, sensor, 1, "delivering", 1, "now() - interval '1 second'");
        UUID newer = notification(client, sensor, 2, "pending", 0, null);

        assertThat(store.claim(10, Set.of(), LEASE)).extracting(Delivery::id).containsExactly(crashed, newer);
    }

    @Test
    void theClaimTakesTheLongestDueFirstAndLeavesOutClosedClients() {
        UUID client = newClient();
        UUID closed = newClient();
        String sensor = newSensor(client, closed);
        String other = newSensor(client);
        UUID later = notification(client, sensor, 1, "pending", 0, null, "now() - interval '1 minute'");
        UUID earlier = notification(client, other, 1, "pending", 0, null, "now() - interval '2 minutes'");
        notification(closed, sensor, 1, "pending", 0, null, "now() - interval '3 minutes'");
        notification(client, newSensor(client), 1, "pending", 0, null, "now() + interval '1 minute'");

        assertThat(store.claim(10, Set.of(closed), LEASE)).extracting(Delivery::id).containsExactly(earlier, later);
    }

    private UUID newClient() {
        return jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('test', ?, ?) RETURNING id",
                UUID.class, "http://127.0.0.1:9/hook", WebhookSigner.newSecret());
    }

    private String newSensor(UUID... clients) {
        String sensor = "C" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'Room')", sensor);
        for (UUID client : clients) {
            jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)", client, sensor);
        }
        return sensor;
    }

    private UUID notification(UUID client, String sensor, long sequence, String status, int attempts, String leaseUntil) {
        return notification(client, sensor, sequence, status, attempts, leaseUntil, "now() - interval '1 second'");
    }

    /** A notification as the outbox would hold it; the times are SQL expressions of the test's own. */
    private UUID notification(UUID client, String sensor, long sequence, String status, int attempts, String leaseUntil,
                              String nextAttemptAt) {
        // one event of the sensor, whichever of its clients is notified of it
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
