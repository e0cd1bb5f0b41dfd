package io.lockwatch.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import io.lockwatch.history.HistoryRecords.EventRecord;
import io.lockwatch.ingest.IngestProperties;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/** The history store contract on the real ClickHouse, and readings and events flowing into it. */
@CamelSpringBootTest
@SpringBootTest
@ActiveProfiles("external")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class ClickHouseHistoryStoreIT extends HistoryStoreContract {

    static final long FAR = 4_102_444_800_000L;

    @Autowired RabbitTemplate rabbit;
    @Autowired IngestProperties ingest;
    @Autowired JdbcTemplate jdbc;

    @Override
    void recordEvent(String sensor, long sequence, String type, Integer state, Integer previous, long at) {
        ((ClickHouseHistoryStore) store).writeEvents(List.of(new EventRecord(sensor, sequence, type, state, previous, at)));
    }

    @Test
    void theStoreIsClickHouse() {
        assertThat(store).isInstanceOf(ClickHouseHistoryStore.class);
    }

    @Test
    void aReadingIsQueryableWithinTwoSecondsAndItsEventIsExported() {
        String s = sensor();
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'room')", s);
        long ts = System.currentTimeMillis() - 1000;
        String body = "{\"sensor_id\":\"" + s + "\",\"data\":1,\"ts\":" + ts + "}";

        rabbit.send(ingest.exchange(), s, new Message(body.getBytes(StandardCharsets.UTF_8), new MessageProperties()));

        await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(100))
                .until(() -> store.readings(s, 0, FAR, 10, null).items().size() == 1);
        await().atMost(Duration.ofSeconds(10)).until(() -> store.events(s, 0, FAR, 10, null).items().size() == 1);
        EventRecord e = store.events(s, 0, FAR, 10, null).items().get(0);
        assertThat(e.type()).isEqualTo("sensor.state_changed");
        assertThat(e.occurredAt()).isEqualTo(ts);
        assertThat(store.readings(s, 0, FAR, 10, null).items().get(0).registered()).isTrue();
    }
}
