package io.lockwatch.infra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import org.apache.camel.CamelContext;
import org.apache.camel.ProducerTemplate;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.component.mock.MockEndpoint;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.AmqpAdmin;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * What the foundation promises, whichever broker and database the service runs on: it starts, reports
 * healthy, has its schema, and carries a message through the broker with Camel. Run on the embedded default
 * by {@link EmbeddedFoundationTest} and on the real services by {@code ExternalFoundationIT}.
 */
@CamelSpringBootTest
@AutoConfigureObservability // metrics export is off in tests unless asked for
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
public abstract class FoundationContract {

    @Autowired
    protected TestRestTemplate http;
    @Autowired
    protected JdbcTemplate jdbc;
    @Autowired
    protected CamelContext camel;
    @Autowired
    protected ProducerTemplate producer;
    @Autowired
    protected AmqpAdmin amqpAdmin;
    @Autowired
    protected io.lockwatch.infra.metrics.SampledGauges sampledGauges;

    private String selftestQueue;

    @AfterEach
    void removeSelftestQueue() throws Exception {
        if (selftestQueue != null) {
            camel.getRouteController().stopRoute(selftestQueue);
            camel.removeRoute(selftestQueue);
            amqpAdmin.deleteQueue(selftestQueue);
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void healthIsUpWithDatabaseAndBroker() {
        org.springframework.http.HttpHeaders headers = new org.springframework.http.HttpHeaders();
        headers.setBearerAuth("test-read-token");
        ResponseEntity<Map> response = http.exchange("/actuator/health", org.springframework.http.HttpMethod.GET,
                new org.springframework.http.HttpEntity<>(headers), Map.class);

        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(response.getBody()).containsEntry("status", "UP");
        Map<String, Map<String, Object>> components = (Map<String, Map<String, Object>>) response.getBody().get("components");
        assertThat(components.get("db")).containsEntry("status", "UP");
        assertThat(components.get("rabbit")).containsEntry("status", "UP");
    }

    @Test
    void prometheusMetricsAreServed() {
        ResponseEntity<String> response = http.getForEntity("/actuator/prometheus", String.class);

        assertThat(response.getStatusCode()).isEqualTo(HttpStatus.OK);
        assertThat(response.getBody()).contains("jvm_memory_used_bytes");
        // log events per level, counted without a turbo filter on every disabled trace and debug call
        assertThat(response.getBody()).contains("logback_events_total{application=\"lockwatch\",level=\"error\"}");
        ch.qos.logback.classic.LoggerContext logging =
                (ch.qos.logback.classic.LoggerContext) org.slf4j.LoggerFactory.getILoggerFactory();
        assertThat(logging.getTurboFilterList()).noneMatch(f -> f.getClass().getName().contains("Metrics"));
    }

    /**
     * A scrape needs no token, so it must cost no query (issue 36): the gauges that count rows are sampled on a timer
     * and read from memory. With the sampling stopped and the table a count reads gone, a scrape still shows the
     * last sample; a gauge that queried would read NaN.
     */
    @Test
    void aScrapeRunsNoQuery() throws Exception {
        camel.getRouteController().stopRoute("costly-gauges-are-sampled");
        try {
            sampledGauges.sample(); // the timer's step, once
            double sampled = gauge("lockwatch_alarms_active");
            assertThat(sampled).isNotNaN();
            jdbc.execute("ALTER TABLE alarms RENAME TO alarms_away");
            try {
                for (int i = 0; i < 5; i++) {
                    assertThat(gauge("lockwatch_alarms_active")).isEqualTo(sampled);
                }
            } finally {
                jdbc.execute("ALTER TABLE alarms_away RENAME TO alarms");
            }
        } finally {
            camel.getRouteController().startRoute("costly-gauges-are-sampled");
        }
    }

    private double gauge(String name) {
        String body = http.getForEntity("/actuator/prometheus", String.class).getBody();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + name + "\\{[^}]*\\} (\\S+)$").matcher(body);
        assertThat(m.find()).as(name + " in the scrape").isTrue();
        return Double.parseDouble(m.group(1));
    }

    @Test
    void databaseConnectionsGiveUpOnAStatementOrAnAnswerThatNeverComes() {
        assertThat(jdbc.queryForObject("SHOW statement_timeout", String.class)).isEqualTo("30s");
        // a black-holed connection: no answer for this long and the read fails, instead of wedging its thread
        assertThat(jdbc.execute((java.sql.Connection c) -> c.getNetworkTimeout())).isEqualTo(60_000);
    }

    @Test
    void schemaIsMigratedAndEnforcesSensorIds() {
        assertThat(jdbc.queryForObject("SELECT count(*) FROM flyway_schema_history WHERE success", Integer.class))
                .isPositive();
        String good = "T" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, ?)", good, "Moscow, Russia, Svobody st. 23 fl 1 room 16");
        try {
            assertThat(jdbc.queryForObject("SELECT address FROM sensors WHERE id = ?", String.class, good))
                    .isEqualTo("Moscow, Russia, Svobody st. 23 fl 1 room 16");
            for (String bad : new String[] {"", "has-dash", "with space", "0123456789aBcDeFX", "ünicode"}) {
                assertThatThrownBy(() -> jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'x')", bad))
                        .as("sensor id %s", bad)
                        .isInstanceOf(DataIntegrityViolationException.class);
            }
        } finally {
            jdbc.update("DELETE FROM sensors WHERE id = ?", good);
        }
    }

    @Test
    void camelCarriesAMessageThroughTheBroker() throws Exception {
        selftestQueue = "lockwatch.selftest." + UUID.randomUUID();
        camel.addRoutes(new RouteBuilder() {
            @Override
            public void configure() {
                from("spring-rabbitmq:lockwatch.selftest?queues=" + selftestQueue + "&routingKey=" + selftestQueue)
                        .routeId(selftestQueue)
                        .to("mock:selftest");
            }
        });
        MockEndpoint received = camel.getEndpoint("mock:selftest", MockEndpoint.class);
        received.reset();
        String body = "ping " + UUID.randomUUID();
        received.expectedBodiesReceived(body);

        producer.sendBody("spring-rabbitmq:lockwatch.selftest?routingKey=" + selftestQueue + "&exchangePattern=InOnly", body);

        received.assertIsSatisfied(TimeUnit.SECONDS.toMillis(10));
    }
}
