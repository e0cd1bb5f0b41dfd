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

        for (int i = 0; i < 250; i++) {
            String body = "{\"sensor_id\":\"" + s + "\",\"data\":" + (i % 2) + ",\"ts\":" + (ts + i) + "}";
            rabbit.send(ingest.exchange(), s, new Message(body.getBytes(StandardCharsets.UTF_8), new MessageProperties()));
        }

        await().atMost(Duration.ofSeconds(15)).until(() -> inserts.stream().mapToInt(Integer::intValue).sum() == 250);
        List<Integer> sizes = List.copyOf(inserts);
        assertThat(sizes.subList(0, sizes.size() - 1)).as("completed by size").allMatch(n -> n >= 100);
        assertThat(sizes.get(sizes.size() - 1)).as("the remainder, completed by time").isLessThan(100);
        assertThat(meters.get("lockwatch.history.insert.size").summary().count()).isEqualTo(sizes.size());
    }
}
