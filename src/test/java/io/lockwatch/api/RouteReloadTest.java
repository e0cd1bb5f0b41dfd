package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.testing.Readings;
import org.apache.camel.CamelContext;
import org.apache.camel.ConsumerTemplate;
import org.apache.camel.Exchange;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/** A YAML route in the external routes directory is loaded, and a change to it takes effect without a restart. */
@CamelSpringBootTest
@SpringBootTest(properties = "lockwatch.routes.dir=target/test-routes-reload")
class RouteReloadTest {

    static final Path DIR = Path.of("target/test-routes-reload");
    static final Path FILE = DIR.resolve("forward-events.camel.yaml");

    @Autowired CamelContext camel;
    @Autowired ConsumerTemplate consumer;
    @Autowired RabbitTemplate rabbit;
    @Autowired IngestProperties ingest;
    @Autowired JdbcTemplate jdbc;

    static {
        try {
            Files.createDirectories(DIR);
            Files.writeString(FILE, route("first"));
            Files.writeString(DIR.resolve("defect.camel.yaml"), """
                    - route:
                        id: operator-route-with-a-defect
                        from:
                          uri: direct:operator-defect
                          steps:
                            - throwException:
                                exceptionType: java.lang.IllegalStateException
                                message: a defect (test)
                    """);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static String route(String tag) {
        return """
                - route:
                    id: operator-forwards-sensor-events
                    from:
                      uri: seda:sensor-events
                      steps:
                        - setBody:
                            simple: "%s ${body.sensorId} ${body.sequence}"
                        - to: seda:reload-probe
                """.formatted(tag);
    }

    @Test
    void anEditedRouteFileChangesTheBehaviourWithoutARestart() throws Exception {
        assertThat(camel.getRoute("operator-forwards-sensor-events")).isNotNull();
        String s = "R" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'room')", s);

        Readings.publishInOrder(rabbit, ingest.exchange(), List.of(Readings.reading(s, 1, System.currentTimeMillis() - 1000)));
        assertThat(consumer.receiveBody("seda:reload-probe", 10_000, String.class)).isEqualTo("first " + s + " 1");

        Files.writeString(FILE, route("second"));
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500)).until(() -> {
            Readings.publishInOrder(rabbit, ingest.exchange(),
                    List.of(Readings.reading(s, probe++ % 2, System.currentTimeMillis())));
            String body = consumer.receiveBody("seda:reload-probe", 2000, String.class);
            return body != null && body.startsWith("second " + s);
        });
        // and the audit log tells which route was changed live, from which file
        assertThat(jdbc.queryForList("SELECT actor || ' ' || operation || ' ' || (details ->> 'file') FROM audit_log "
                + "WHERE resource = 'routes/operator-forwards-sensor-events'", String.class))
                .contains("routes-directory routes.reloaded forward-events.camel.yaml");
    }

    private int probe;

    /**
     * An operator's route names no route configuration, so the unnamed one applies: a defect is logged with the
     * route's id and handled, not retried and not thrown back at the caller.
     */
    @Test
    void aDefectInAnOperatorsRouteIsLoggedWithItsRoute() {
        Logger logger = (Logger) LoggerFactory.getLogger(io.lockwatch.infra.errors.UnexpectedFailures.class);
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        logger.addAppender(log);
        Exchange done;
        try {
            done = camel.createProducerTemplate().send("direct:operator-defect", e -> e.getMessage().setBody("x"));
        } finally {
            logger.detachAppender(log);
        }
        assertThat(done.getException()).isNull();
        assertThat(log.list).singleElement().satisfies(e -> {
            assertThat(e.getFormattedMessage()).isEqualTo("Unexpected failure in route operator-route-with-a-defect");
            assertThat(e.getThrowableProxy().getMessage()).isEqualTo("a defect (test)");
        });
    }
}
