package io.lockwatch.retention;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.camel.CamelContext;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Retention on the embedded PostgreSQL, with a clock moved past it. This test's rows are dated 2021 and its clock
 * stands in March 2021, so that the horizon falls among them and every other row of the database (dated now) is
 * newer than it: only this test's old rows can go.
 */
@CamelSpringBootTest
@SpringBootTest
class RetentionTest {

    static final Instant JANUARY = Instant.parse("2021-01-01T00:00:00Z");
    /** 30 days of notifications and 40 of history back from here: January's rows are past both, March's are not. */
    static final Clock MARCH = Clock.fixed(Instant.parse("2021-03-01T00:00:00Z"), ZoneOffset.UTC);

    @Autowired JdbcTemplate jdbc;
    @Autowired CamelContext camel;

    @Test
    void rowsPastTheirRetentionGoInBatchesAndPendingNotificationsAndTheirEventsStay() {
        UUID client = jdbc.queryForObject("""
                INSERT INTO clients (name, url, webhook_secret) VALUES ('retention', 'http://127.0.0.1:9/r', 'whsec_AAAA')
                RETURNING id""", UUID.class);
        String sensor = "R" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'Room')", sensor);
        // five delivered in January, each with an attempt; one dead in March; one pending since January
        for (int i = 1; i <= 5; i++) {
            UUID n = notification(client, sensor, i, "delivered", "2021-01-0" + i);
            jdbc.update("""
                    INSERT INTO delivery_attempts (notification_id, client_id, sensor_id, event_type, attempt, duration_ms, attempted_at)
                    VALUES (?, ?, ?, 'sensor.state_changed', 1, 3, ?::timestamptz)""", n, client, sensor, "2021-01-0" + i);
        }
        UUID deadInMarch = notification(client, sensor, 6, "dead", "2021-02-27");
        UUID pending = notification(client, sensor, 7, "pending", null);
        long eventWithoutNotification = event(sensor, 8, "2021-01-01");
        readingReceived(sensor + "/old", sensor, "2021-01-01");
        readingReceived(sensor + "/new", sensor, "2021-02-25");

        long removed = new Retention(jdbc, Duration.ofDays(30), Duration.ofDays(40), 2, null, MARCH,
                new SimpleMeterRegistry()).removeOld();

        assertThat(jdbc.queryForList("SELECT id FROM notifications WHERE client_id = ?", UUID.class, client))
                .containsExactlyInAnyOrder(deadInMarch, pending);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM delivery_attempts WHERE client_id = ?", Integer.class, client))
                .as("the attempts of removed notifications go with them").isZero();
        assertThat(jdbc.queryForList("SELECT sequence FROM sensor_events WHERE sensor_id = ? ORDER BY sequence", Long.class, sensor))
                .as("the events of kept notifications stay; January's others go").containsExactly(6L, 7L);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensor_events WHERE id = ?", Integer.class, eventWithoutNotification))
                .isZero();
        assertThat(jdbc.queryForList("SELECT reading_id FROM reading_history WHERE sensor_id = ?", String.class, sensor))
                .containsExactly(sensor + "/new");
        assertThat(removed).as("5 notifications, 5 attempts, 6 events, 1 reading").isEqualTo(17);
    }

    @Test
    void theRouteRunsRetentionOnAClusteredTrigger() {
        assertThat(camel.getRoute("old-history-and-notifications-are-removed").getEndpoint().getEndpointUri())
                .startsWith("quartz://lockwatch/retention");
    }

    /** A notification of the sensor's event {@code sequence}, both of the given day; finished then unless pending. */
    private UUID notification(UUID client, String sensor, long sequence, String status, String day) {
        long event = event(sensor, sequence, day == null ? "2021-01-01" : day);
        return jdbc.queryForObject("""
                INSERT INTO notifications (event_id, client_id, sensor_id, type, sequence, status, next_attempt_at,
                                           created_at, finished_at)
                VALUES (?, ?, ?, 'sensor.state_changed', ?, ?, now() + interval '1 day', coalesce(?::timestamptz, '2021-01-01'),
                        ?::timestamptz)
                RETURNING id""", UUID.class, event, client, sensor, sequence, status, day, day);
    }

    private long event(String sensor, long sequence, String day) {
        return jdbc.queryForObject("""
                INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at, recorded_at)
                VALUES (?, ?, 'sensor.state_changed', 0, 1, ?::timestamptz, ?::timestamptz) RETURNING id""",
                Long.class, sensor, sequence, day, day);
    }

    private void readingReceived(String id, String sensor, String day) {
        jdbc.update("""
                INSERT INTO reading_history (reading_id, sensor_id, data, measured_at, received_at, time_source, registered)
                VALUES (?, ?, 1, ?::timestamptz, ?::timestamptz, 'reading', true)""", id, sensor, day, day);
    }
}
