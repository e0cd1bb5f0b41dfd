package io.lockwatch.heartbeat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.ingest.LastSeenTolerance;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.NotifyBuilder;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A sensor that reported while ingest was not running (its reading waits in the broker) is not declared lost
 * for a silence that did not happen: the scan waits for the backlog, and the reading's own time counts.
 */
@CamelSpringBootTest
@SpringBootTest(properties = {"lockwatch.heartbeat.timeout=3s", "lockwatch.heartbeat.max-backlog=0"})
class HeartbeatAfterDowntimeTest {

    static final String INGEST = "readings-are-consumed-from-rabbitmq";

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired IngestProperties ingest;
    @Autowired CamelContext camel;
    @Autowired org.springframework.amqp.core.AmqpAdmin amqpAdmin;

    @Test
    void aReadingWaitingInTheBrokerKeepsItsSensorOnline() throws Exception {
        String s = "D" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'room')", s);
        camel.getRouteController().stopRoute(INGEST); // the service is "down" for ingest
        long readingTs = System.currentTimeMillis();
        String body = "{\"sensor_id\":\"" + s + "\",\"data\":1,\"ts\":" + readingTs + "}";
        rabbit.send(ingest.exchange(), s, new Message(body.getBytes(StandardCharsets.UTF_8), new MessageProperties()));
        await().atMost(Duration.ofSeconds(5)).until(() -> queued() == 1); // waiting in the broker, not consumed
        // its last reading before the downtime was an hour ago: by the table alone it is long overdue
        jdbc.update("""
                UPDATE sensor_state SET state = 0, sequence = 1, connectivity = 'online',
                       last_reading_at = now() - interval '1 hour', last_seen_at = now() - interval '1 hour',
                       lost_deadline = now() - interval '1 hour' + interval '3 seconds'
                 WHERE sensor_id = ?""", s);

        assertThat(new NotifyBuilder(camel).fromRoute("silent-sensors-are-declared-lost").whenCompleted(4).create()
                .matches(15, TimeUnit.SECONDS)).isTrue();
        assertThat(lostEvents(s)).as("declared lost while its reading waited").isEmpty();

        camel.getRouteController().startRoute(INGEST);

        // the reading applies, and only the silence after it, 3 s later, is a real one
        await().atMost(Duration.ofSeconds(15)).until(() -> !lostEvents(s).isEmpty());
        assertThat(lostEvents(s)).containsExactly(readingTs + 3000 + LastSeenTolerance.of(3000));
    }

    private long queued() {
        Object count = amqpAdmin.getQueueProperties(ingest.queue()).get(org.springframework.amqp.rabbit.core.RabbitAdmin.QUEUE_MESSAGE_COUNT);
        return ((Number) count).longValue();
    }

    private List<Long> lostEvents(String sensor) {
        return jdbc.queryForList("""
                SELECT (extract(epoch FROM occurred_at) * 1000)::bigint FROM sensor_events
                 WHERE sensor_id = ? AND type = 'sensor.connection_lost' ORDER BY sequence""", Long.class, sensor);
    }
}
