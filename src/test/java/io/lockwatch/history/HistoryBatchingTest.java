package io.lockwatch.history;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.lockwatch.ingest.IngestProperties;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.AdviceWith;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.apache.camel.test.spring.junit5.UseAdviceWith;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/** History inserts complete by size (100 readings) and, for the rest, by time (2 s). */
@CamelSpringBootTest
@UseAdviceWith
@SpringBootTest(properties = {"lockwatch.ingest.batch-size=50", "lockwatch.ingest.batch-interval=100",
        "lockwatch.history.batch-size=100", "lockwatch.history.batch-interval=2000"})
class HistoryBatchingTest {

    @Autowired CamelContext camel;
    @Autowired RabbitTemplate rabbit;
    @Autowired IngestProperties ingest;
    @Autowired MeterRegistry meters;

    @Test
    void insertsCompleteBySizeAndTheRemainderByTime() throws Exception {
        List<Integer> inserts = java.util.Collections.synchronizedList(new ArrayList<>());
        AdviceWith.adviceWith(camel, "readings-are-written-to-history", r -> r.weaveById("history-batch-is-inserted")
                .after().process(e -> inserts.add(e.getMessage().getBody(HistoryBatch.class).size())));
        camel.start();
        String s = "Z" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        long ts = System.currentTimeMillis() - 60_000;

        publish(s, ts, 0, 200);
        await().atMost(Duration.ofSeconds(15)).until(() -> inserts.stream().mapToInt(Integer::intValue).sum() == 200);
        List<Integer> first = List.copyOf(inserts);
        assertThat(first.subList(0, first.size() - 1)).as("completed by size").allMatch(n -> n >= 100);

        publish(s, ts, 200, 10);
        await().atMost(Duration.ofSeconds(15)).until(() -> inserts.stream().mapToInt(Integer::intValue).sum() == 210);
        assertThat(inserts.get(inserts.size() - 1)).as("a remainder, completed by time").isEqualTo(10);
        assertThat(meters.get("lockwatch.history.insert.size").summary().count()).isEqualTo(inserts.size());
    }

    private void publish(String s, long ts, int from, int n) {
        List<Message> messages = new ArrayList<>();
        for (int i = from; i < from + n; i++) {
            messages.add(io.lockwatch.testing.Readings.reading(s, i % 2, ts + i));
        }
        io.lockwatch.testing.Readings.publishInOrder(rabbit, ingest.exchange(), messages);
    }
}
