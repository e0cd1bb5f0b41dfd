package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.testing.Readings;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * More notifications due than request slots: they drain as the slots free up, not one claim per poll interval.
 * Two slots and a poll interval of ten minutes, so only the wake-up after each attempt can deliver them in time
 * (the drill that found it: after a RabbitMQ restart a backlog of 5,000 drained at 64 a second).
 */
@CamelSpringBootTest
@SpringBootTest(properties = {
        "lockwatch.notify.max-concurrent=2",
        "lockwatch.notify.poll-interval=600000"})
class NotifyBacklogTest {

    @org.junit.jupiter.api.extension.RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired CamelContext camel;
    @Autowired IngestProperties ingest;
    @Autowired io.micrometer.core.instrument.MeterRegistry meters;

    @Test
    void aBacklogLargerThanTheSlotsDrainsWithoutWaitingForThePoll() {
        String path = "/hook-" + UUID.randomUUID();
        UUID client = jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('test', ?, ?) RETURNING id",
                UUID.class, receiver.url(path), WebhookSigner.newSecret());
        List<Message> readings = new ArrayList<>();
        long ts = System.currentTimeMillis() - 1000;
        for (int i = 0; i < 12; i++) {
            String sensor = "Q" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
            jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'Room')", sensor);
            jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)", client, sensor);
            readings.add(Readings.reading(sensor, 1, ts + i));
        }

        // at most a few batches, so at most a few claims of two from ingest's wake-ups
        Readings.publishInOrder(rabbit, ingest.exchange(), readings);

        await().atMost(Duration.ofSeconds(30)).until(() -> receiver.at(path).size() == 12);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM notifications WHERE client_id = ? AND status = 'delivered'",
                Integer.class, client)).isEqualTo(12);
        // and every request slot is free again: none leaked with a wake-up that found the claim queue full
        await().atMost(Duration.ofSeconds(10)).until(() -> meters.get("lockwatch.notifications.in.flight").gauge().value() == 0);
    }

    /**
     * The claim a wake-up starts is split into the attempts, which inherit the wake-up exchange's properties. Found
     * by NotificationCrashIT: the wake-up after a failed attempt was a copy of its exchange, the caught exception went
     * with it into the next attempts, and notifications their clients had answered 200 were recorded as failed and
     * sent again. Here the wake-up carries a caught exception on purpose.
     */
    @Test
    void anAttemptIsJudgedByItsOwnAnswerNotByTheExchangeThatWokeTheClaim() {
        String path = "/hook-" + UUID.randomUUID();
        UUID client = jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('up', ?, ?) RETURNING id",
                UUID.class, receiver.url(path), WebhookSigner.newSecret());
        String sensor = "W" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'Room')", sensor);
        jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)", client, sensor);
        Long event = jdbc.queryForObject("""
                INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at)
                VALUES (?, 1, 'sensor.state_changed', 1, 0, now()) RETURNING id""", Long.class, sensor);
        jdbc.update("INSERT INTO notifications (event_id, client_id, sensor_id, type, sequence) VALUES (?, ?, ?, 'sensor.state_changed', 1)",
                event, client, sensor);

        camel.createProducerTemplate().send("seda:notifications-recorded", e -> e.setProperty(Exchange.EXCEPTION_CAUGHT,
                new java.net.ConnectException("Connection refused (an earlier attempt to another client)")));

        await().atMost(Duration.ofSeconds(30)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM delivery_attempts WHERE client_id = ?", Integer.class, client) > 0);
        assertThat(receiver.at(path)).hasSize(1);
        assertThat(jdbc.queryForList("SELECT error FROM delivery_attempts WHERE client_id = ?", String.class, client))
                .as("one attempt, not failed").containsExactly((String) null);
        assertThat(jdbc.queryForObject("SELECT status FROM notifications WHERE client_id = ?", String.class, client))
                .isEqualTo("delivered");
    }
}
