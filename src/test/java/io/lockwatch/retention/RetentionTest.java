package io.lockwatch.retention;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.camel.CamelContext;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Retention on the embedded PostgreSQL, with a clock moved past it: the test's clock stands 100 days ahead, so its
 * horizons are 70 days (notifications) and 60 days (history) ahead of now. The rows it means to be old are dated
 * yesterday, which the service's own retention pass (on the real clock, from the route) leaves alone; those it
 * means to keep are dated past the horizons.
 */
@CamelSpringBootTest
// RANDOM_PORT, as the API's tests: one Spring context for both (src/test/resources/config/application.yaml)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class RetentionTest {

    static final Clock LATER = Clock.offset(Clock.systemUTC(), Duration.ofDays(100));
    static final String OLD = "now() - interval '1 day'";

    @Autowired JdbcTemplate jdbc;
    @Autowired CamelContext camel;

    @Test
    void rowsPastTheirRetentionGoInBatchesAndPendingNotificationsAndTheirEventsStay() {
        UUID client = jdbc.queryForObject("""
                INSERT INTO clients (name, url, webhook_secret) VALUES ('retention', 'http://127.0.0.1:9/r', 'whsec_AAAA')
                RETURNING id""", UUID.class);
        String sensor = "R" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'Room')", sensor);
        // five delivered yesterday, each with an attempt; one dead past the horizon; one pending since yesterday
        for (int i = 1; i <= 5; i++) {
            UUID n = notification(client, sensor, i, "delivered", OLD);
            jdbc.update("""
                    INSERT INTO delivery_attempts (notification_id, client_id, sensor_id, event_type, attempt, duration_ms, attempted_at)
                    VALUES (?, ?, ?, 'sensor.state_changed', 1, 3, now() - interval '1 day')""", n, client, sensor);
        }
        UUID deadLater = notification(client, sensor, 6, "dead", "now() + interval '75 days'");
        UUID pending = notification(client, sensor, 7, "pending", null);
        long eventWithoutNotification = event(sensor, 8, OLD);
        readingReceived(sensor + "/old", sensor, OLD);
        readingReceived(sensor + "/new", sensor, "now() + interval '65 days'");

        List<Long> rests = new java.util.ArrayList<>();
        long removed = new Retention(jdbc, Duration.ofDays(30), Duration.ofDays(40), 2, null, LATER,
                new SimpleMeterRegistry(), 1.5, rests::add).removeOld();

        assertThat(jdbc.queryForList("SELECT id FROM notifications WHERE client_id = ?", UUID.class, client))
                .containsExactlyInAnyOrder(deadLater, pending);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM delivery_attempts WHERE client_id = ?", Integer.class, client))
                .as("the attempts of removed notifications go with them").isZero();
        assertThat(jdbc.queryForList("SELECT sequence FROM sensor_events WHERE sensor_id = ? ORDER BY sequence", Long.class, sensor))
                .as("the events of kept notifications stay; January's others go").containsExactly(6L, 7L);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensor_events WHERE id = ?", Integer.class, eventWithoutNotification))
                .isZero();
        assertThat(jdbc.queryForList("SELECT reading_id FROM reading_history WHERE sensor_id = ?", String.class, sensor))
                .containsExactly(sensor + "/new");
        assertThat(removed).as("5 notifications, 5 attempts, 6 events, 1 reading of this test's, and any other old ones")
                .isGreaterThanOrEqualTo(17);
        assertThat(rests).as("a rest after each full batch: at least the notifications' first two and the events' three")
                .hasSizeGreaterThanOrEqualTo(5).allMatch(nanos -> nanos > 0);
    }

    @Test
    void auditEntriesGoAfterTheirOwnRetentionAndNotBefore() {
        String resource = "retention/" + UUID.randomUUID();
        for (int days : new int[] {401, 402, 399}) {
            jdbc.update("""
                    INSERT INTO audit_log (id, at, actor, actor_kind, operation, resource, outcome)
                    VALUES (gen_random_uuid(), now() - make_interval(days => ?), 'full-token-1', 'full-token', 'deleteSensor', ?, 'succeeded')""",
                    days, resource);
        }
        new Retention(jdbc, Duration.ofDays(30), Duration.ofDays(40), 1, null, java.time.Clock.systemUTC(),
                new SimpleMeterRegistry(), 0, rests -> { }, auditLog::removeBefore, Duration.ofDays(400)).removeOld();
        assertThat(jdbc.queryForList("SELECT extract(day FROM now() - at)::int FROM audit_log WHERE resource = ?",
                Integer.class, resource)).containsExactly(399);
    }

    @Autowired io.lockwatch.audit.AuditLog auditLog;

    @Test
    void theRouteRunsRetentionOnAClusteredTrigger() {
        assertThat(camel.getRoute("old-history-and-notifications-are-removed").getEndpoint().getEndpointUri())
                .startsWith("quartz://lockwatch/retention");
    }

    /**
     * A notification of the sensor's event {@code sequence}, both at {@code when} (an SQL expression); finished
     * then unless pending (null).
     */
    private UUID notification(UUID client, String sensor, long sequence, String status, String when) {
        long event = event(sensor, sequence, when == null ? OLD : when);
        return jdbc.queryForObject("""
                INSERT INTO notifications (event_id, client_id, sensor_id, type, sequence, status, next_attempt_at,
                                           created_at, finished_at)
                VALUES (?, ?, ?, 'sensor.state_changed', ?, ?, now() + interval '1 day', %s, %s)
                RETURNING id""".formatted(when == null ? OLD : when, when == null ? "NULL" : when),
                UUID.class, event, client, sensor, sequence, status);
    }

    private long event(String sensor, long sequence, String when) {
        return jdbc.queryForObject("""
                INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at, recorded_at)
                VALUES (?, ?, 'sensor.state_changed', 0, 1, %1$s, %1$s) RETURNING id""".formatted(when),
                Long.class, sensor, sequence);
    }

    private void readingReceived(String id, String sensor, String when) {
        jdbc.update("""
                INSERT INTO reading_history (reading_id, sensor_id, data, measured_at, received_at, time_source, registered)
                VALUES (?, ?, 1, %1$s, %1$s, 'reading', true)""".formatted(when), id, sensor);
    }
}
