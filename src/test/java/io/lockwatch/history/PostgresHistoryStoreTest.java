package io.lockwatch.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.time.Duration;

import io.lockwatch.ingest.IngestProperties;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/** History on the embedded default: the store contract on PostgreSQL, and readings flowing into it. */
@CamelSpringBootTest
// RANDOM_PORT, as the API's tests: one Spring context for both (src/test/resources/config/application.yaml)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class PostgresHistoryStoreTest extends HistoryStoreContract {

    static final long FAR = 4_102_444_800_000L; // 2100

    @Autowired JdbcTemplate jdbc;
    @Autowired RabbitTemplate rabbit;
    @Autowired IngestProperties ingest;

    @Override
    void recordEvent(String sensor, long sequence, String type, Integer state, Integer previous, long at) {
        jdbc.update("INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at) VALUES (?, ?, ?, ?, ?, ?)",
                sensor, sequence, type, state, previous, new Timestamp(at));
    }

    @Test
    void theStoreIsPostgresOnTheEmbeddedDefault() {
        assertThat(store).isInstanceOf(PostgresHistoryStore.class);
    }

    @Test
    void everyValidReadingReachesHistoryOnceWhetherItsSensorIsRegisteredOrNot() {
        String known = sensor(), unknown = sensor();
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'room')", known);
        long ts = System.currentTimeMillis() - 5000;

        publish(known, "{\"sensor_id\":\"" + known + "\",\"data\":1,\"ts\":" + ts + "}", "a");
        publish(known, "{\"sensor_id\":\"" + known + "\",\"data\":1,\"ts\":" + ts + "}", "a"); // delivered twice
        publish(unknown, "{\"sensor_id\":\"" + unknown + "\",\"data\":0,\"ts\":" + ts + "}", null);
        publish(unknown, "{\"sensor_id\":\"bad-id\",\"data\":0}", null);

        await().atMost(Duration.ofSeconds(10)).until(() -> store.readings(unknown, 0, FAR, 10, null).items().size() == 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> store.readings(known, 0, FAR, 10, null).items().size() == 1);
        var k = store.readings(known, 0, FAR, 10, null).items().get(0);
        assertThat(k.registered()).isTrue();
        assertThat(k.messageId()).isEqualTo("a");
        assertThat(k.measuredAt()).isEqualTo(ts);
        assertThat(store.readings(unknown, 0, FAR, 10, null).items().get(0).registered()).isFalse();
    }

    private void publish(String key, String body, String messageId) {
        MessageProperties p = new MessageProperties();
        if (messageId != null) {
            p.setMessageId(messageId);
        }
        rabbit.send(ingest.exchange(), key, new Message(body.getBytes(StandardCharsets.UTF_8), p));
    }
}
