package io.lockwatch.infra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.testing.Readings;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * Against the HA topology's PostgreSQL ({@code scripts/services.sh --ha up}: a primary and a synchronous standby under
 * pg_auto_failover, on 5441 and 5442): the service finds the primary through the driver's multi-host URL, and after a
 * failover (the standby promoted, the old primary made its standby) it goes on with the new primary, which holds
 * everything committed before.
 */
@SpringBootTest(properties = "spring.datasource.url=jdbc:postgresql://127.0.0.1:5441,127.0.0.1:5442/lockwatch?targetServerType=primary")
@ActiveProfiles("external")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class HaPostgresIT {

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired IngestProperties ingest;

    @Test
    void theServiceGoesOnWithTheNewPrimaryAfterAFailover() throws Exception {
        String sensor = "Pg" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'HA door')", sensor);
        long t = System.currentTimeMillis() - 60_000;
        rabbit.send(ingest.exchange(), sensor, Readings.reading(sensor, 0, t));
        await().atMost(Duration.ofSeconds(30)).until(() -> sequence(sensor) == 1);
        int before = serverPort();

        failover();

        // on one channel: two sends may take two channels, and the broker keeps order only within one; the later
        // reading first would leave the earlier one older than the state, an event that never was
        Readings.publishInOrder(rabbit, ingest.exchange(),
                List.of(Readings.reading(sensor, 1, t + 1000), Readings.reading(sensor, 0, t + 2000)));
        // the first event was committed on the old primary: the new one has it, and numbers on from it
        try {
            await().atMost(Duration.ofSeconds(60)).until(() -> sequence(sensor) == 3);
        } catch (org.awaitility.core.ConditionTimeoutException e) {
            // say where the pipeline stood
            throw new AssertionError("sequence " + sequence(sensor) + " after the failover; " + pipelineThreads(), e);
        }
        assertThat(serverPort()).as("the primary the service now writes to").isNotEqualTo(before);
        assertThat(jdbc.queryForList("SELECT sequence FROM sensor_events WHERE sensor_id = ? ORDER BY sequence", Long.class,
                sensor)).containsExactly(1L, 2L, 3L);
    }

    /** The stacks of the threads that apply and finish ingest batches. */
    private static String pipelineThreads() {
        StringBuilder b = new StringBuilder("threads:");
        Thread.getAllStackTraces().forEach((t, stack) -> {
            if (t.getName().contains("ingest") || t.getName().contains("readings") || t.getName().contains("Camel")) {
                b.append("\n").append(t.getName()).append(" ").append(t.getState());
                for (int i = 0; i < Math.min(stack.length, 25); i++) {
                    b.append("\n    at ").append(stack[i]);
                }
            }
        });
        return b.toString();
    }

    private int serverPort() {
        return jdbc.queryForObject("SELECT inet_server_port()", Integer.class);
    }

    private long sequence(String sensor) {
        try {
            List<Long> n = jdbc.queryForList("SELECT sequence FROM sensor_state WHERE sensor_id = ?", Long.class, sensor);
            return n.isEmpty() || n.get(0) == null ? 0 : n.get(0);
        } catch (org.springframework.dao.DataAccessException e) {
            return -1; // the database is changing hands
        }
    }

    private static void failover() throws Exception {
        Process p = new ProcessBuilder("bash", "scripts/services.sh", "--ha", "failover", "postgres")
                .redirectErrorStream(true).redirectOutput(Path.of("target", "services-failover.log").toFile()).start();
        if (!p.waitFor(180, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException("scripts/services.sh --ha failover postgres failed; see target/services-failover.log");
        }
    }
}
