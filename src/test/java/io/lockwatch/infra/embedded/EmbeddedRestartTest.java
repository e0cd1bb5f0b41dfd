package io.lockwatch.infra.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.lockwatch.LockwatchApplication;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.registry.Registry;
import io.lockwatch.testing.Readings;
import org.apache.camel.CamelContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/** On the embedded default, readings queued when the service stops are applied when it starts again. */
class EmbeddedRestartTest {

    @TempDir Path dataDir;

    /**
     * Hikari sets DriverManager's login timeout, JVM-wide, to its connection timeout (5 s): left by an earlier context in
     * this JVM, it would bound the broker's Derby store as it boots, which on a busy machine takes longer.
     */
    @org.junit.jupiter.api.BeforeEach
    void noLoginTimeoutLeftByAnEarlierContext() {
        java.sql.DriverManager.setLoginTimeout(0);
    }

    @Test
    void readingsQueuedBeforeAStopAreAppliedAfterTheStart() throws Exception {
        String sensor = "R" + Long.toString(System.nanoTime(), 36);
        long ts = System.currentTimeMillis() - 60_000;

        try (ConfigurableApplicationContext first = start()) {
            first.getBean(Registry.class).createSensor(sensor, "Restart st. 1", null);
            // no consumer: the readings wait in the broker when the service stops
            first.getBean(CamelContext.class).getRouteController().stopRoute("readings-are-consumed-from-rabbitmq");
            Readings.publishInOrder(first.getBean(RabbitTemplate.class), first.getBean(IngestProperties.class).exchange(),
                    List.of(Readings.reading(sensor, 1, ts), Readings.reading(sensor, 0, ts + 1000)));
        }

        try (ConfigurableApplicationContext second = start()) {
            JdbcTemplate jdbc = second.getBean(JdbcTemplate.class);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(jdbc.queryForList(
                    "SELECT state FROM sensor_events WHERE sensor_id = ? ORDER BY sequence", Integer.class, sensor))
                    .containsExactly(1, 0));
        }
    }

    private ConfigurableApplicationContext start() {
        return new SpringApplicationBuilder(LockwatchApplication.class).run(
                "--server.port=0",
                "--lockwatch.embedded.data-dir=" + dataDir,
                "--lockwatch.embedded.ephemeral=false",
                "--spring.quartz.scheduler-name=lockwatch-restart-" + System.nanoTime());
    }
}
