package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.testing.Readings;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * More notifications due than request slots: they drain as the slots free up, not one claim per poll interval.
 * One slot and a poll interval of ten minutes, so only the wake-up after each attempt can deliver them in time
 * (the drill that found it: after a RabbitMQ restart a backlog of 5,000 drained at 64 a second). With one slot,
 * every wake-up's claim must also see the slot of the attempt that woke it as free already.
 */
@CamelSpringBootTest
@SpringBootTest(properties = {
        "lockwatch.notify.max-concurrent=1",
        "lockwatch.notify.poll-interval=600000"})
class NotifyBacklogTest {

    @org.junit.jupiter.api.extension.RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired IngestProperties ingest;
    @Autowired io.micrometer.core.instrument.MeterRegistry meters;

    @Test
    void aBacklogLargerThanTheSlotsDrainsWithoutWaitingForThePoll() {
        String path = "/hook-" + UUID.randomUUID();
        UUID client = jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('test', ?, ?) RETURNING id",
                UUID.class, receiver.url(path), WebhookSigner.newSecret());
        List<Message> readings = new ArrayList<>();
        long ts = System.currentTimeMillis() - 1000;
        for (int i = 0; i < 20; i++) {
            String sensor = "Q" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
            jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'Room')", sensor);
            jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)", client, sensor);
            readings.add(Readings.reading(sensor, 1, ts + i));
        }

        // at most a few batches, so at most a few claims of one from ingest's wake-ups
        Readings.publishInOrder(rabbit, ingest.exchange(), readings);

        await().atMost(Duration.ofSeconds(30)).until(() -> receiver.at(path).size() == 20);
        // the receiver answers before the attempt is recorded, so the last one may still be committing
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(jdbc.queryForObject(
                "SELECT count(*) FROM notifications WHERE client_id = ? AND status = 'delivered'",
                Integer.class, client)).isEqualTo(20));
        assertThat(receiver.at(path)).hasSize(20);
        // and every request slot is free again: none leaked with a wake-up that found the claim queue full
        await().atMost(Duration.ofSeconds(10)).until(() -> meters.get("lockwatch.notifications.in.flight").gauge().value() == 0);
    }
}
