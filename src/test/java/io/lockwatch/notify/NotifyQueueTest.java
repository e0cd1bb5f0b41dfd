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
import org.springframework.test.annotation.DirtiesContext;

/**
 * A queue of one sensor's notifications to one client drains as each attempt is recorded, not one per poll. Free
 * request slots to spare, so a claim never fills them all (that wake-up is {@link NotifyBacklogTest}'s), and a poll
 * interval of ten minutes: only the recorded attempt's word that its successor waits can claim the next in time.
 */
@CamelSpringBootTest
@SpringBootTest(properties = {
        "lockwatch.notify.max-concurrent=8",
        "lockwatch.notify.poll-interval=600000"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class NotifyQueueTest {

    @org.junit.jupiter.api.extension.RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired IngestProperties ingest;

    /**
     * One sensor's changes form one queue per client: only its head can be claimed, so each next one is claimed when
     * the attempt before it is recorded (its successor waits), not at the poll ten minutes later.
     */
    @Test
    void oneSensorsBurstOfChangesDrainsInOrderWithoutWaitingForThePoll() {
        String path = "/hook-" + UUID.randomUUID();
        UUID client = jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('test', ?, ?) RETURNING id",
                UUID.class, receiver.url(path), WebhookSigner.newSecret());
        String sensor = "Q" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'Room')", sensor);
        jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)", client, sensor);
        List<Message> readings = new ArrayList<>();
        long ts = System.currentTimeMillis() - 1000;
        for (int i = 0; i < 6; i++) {
            readings.add(Readings.reading(sensor, i % 2, ts + i));
        }

        Readings.publishInOrder(rabbit, ingest.exchange(), readings);

        await().atMost(Duration.ofSeconds(30)).until(() -> receiver.at(path).size() == 6);
        assertThat(receiver.at(path)).extracting(r -> r.body().replaceAll(".*\"sequence\":(\\d+).*", "$1"))
                .containsExactly("1", "2", "3", "4", "5", "6");
    }
}
