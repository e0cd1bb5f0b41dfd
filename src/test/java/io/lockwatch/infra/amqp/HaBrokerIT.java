package io.lockwatch.infra.amqp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.testing.RabbitManagement;
import io.lockwatch.testing.Readings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * Against the HA topology's RabbitMQ cluster ({@code scripts/services.sh --ha up}: three nodes on 5681–5683): the
 * service's queues are quorum queues with a replica on every node, and when the node the service is connected to
 * stops, it connects to another and goes on applying readings published through the nodes left.
 */
@SpringBootTest(properties = "spring.rabbitmq.addresses=127.0.0.1:5681,127.0.0.1:5682,127.0.0.1:5683")
@ActiveProfiles("external")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class HaBrokerIT {

    private static final String FIRST = "lwha1@localhost";

    @Autowired IngestProperties ingest;
    @Autowired JdbcTemplate jdbc;
    @Autowired org.springframework.amqp.rabbit.connection.ConnectionFactory service;

    @AfterEach
    void firstNodeRunsAgain() throws Exception {
        rabbitmqctl(FIRST, "start_app");
        rabbitmqctl(FIRST, "await_startup");
    }

    @Test
    void theQueuesAreReplicatedOnEveryNode() throws Exception {
        RabbitManagement management = new RabbitManagement(15682);
        for (String name : List.of(ingest.queue(), ingest.invalidQueue())) {
            JsonNode queue = management.queue("/", name);
            assertThat(queue).as(name).isNotNull();
            assertThat(queue.get("type").asText()).as(name).isEqualTo("quorum");
            List<String> members = new ArrayList<>();
            queue.get("members").forEach(m -> members.add(m.asText()));
            assertThat(members).as(name).containsExactlyInAnyOrder(FIRST, "lwha2@localhost", "lwha3@localhost");
        }
    }

    @Test
    void theServiceGoesOnThroughAnotherNodeWhenItsNodeStops() throws Exception {
        String sensor = "Ha" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'HA door')", sensor);
        CachingConnectionFactory second = new CachingConnectionFactory("127.0.0.1", 5682);
        try {
            RabbitTemplate publisher = new RabbitTemplate(second);
            long t = System.currentTimeMillis() - 60_000;
            publisher.send(ingest.exchange(), sensor, Readings.reading(sensor, 0, t));
            await().atMost(Duration.ofSeconds(30)).until(() -> sequence(sensor) == 1);

            // the service is connected to the first node (the list's order): it stops, connections and all
            assertThat(servicePort()).isEqualTo(5681);
            rabbitmqctl(FIRST, "stop_app");

            publisher.send(ingest.exchange(), sensor, Readings.reading(sensor, 1, t + 1000));
            publisher.send(ingest.exchange(), sensor, Readings.reading(sensor, 0, t + 2000));
            await().atMost(Duration.ofSeconds(60)).until(() -> sequence(sensor) == 3);
            assertThat(servicePort()).as("the node the service went on through").isIn(5682, 5683);
            assertThat(jdbc.queryForObject("SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, sensor))
                    .isZero();
        } finally {
            second.destroy();
        }
    }

    /** The AMQP port of the node the service's connection is open to now. */
    private int servicePort() {
        try (var connection = service.createConnection()) {
            return connection.getDelegate().getPort();
        }
    }

    private long sequence(String sensor) {
        List<Long> n = jdbc.queryForList("SELECT sequence FROM sensor_state WHERE sensor_id = ?", Long.class, sensor);
        return n.isEmpty() || n.get(0) == null ? 0 : n.get(0);
    }

    private static void rabbitmqctl(String node, String command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("rabbitmqctl", "-n", node, "-q", command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(120, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("rabbitmqctl -n " + node + " " + command + " failed: " + out);
        }
    }
}
