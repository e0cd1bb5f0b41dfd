package io.lockwatch.infra.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.notify.WebhookReceiver.Received;
import io.lockwatch.notify.WebhookSigner;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * With tracing on, one reading's trace on the embedded default, read off an in-memory exporter: its ingest batch,
 * under it each delivery attempt of each notification, and the {@code traceparent} that reaches the client naming
 * its attempt's span. One client's endpoint fails once, so its notification has two attempts in the trace.
 */
@CamelSpringBootTest
// Spring Boot's tests turn tracing off unless asked
@org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability(metrics = false)
@SpringBootTest(properties = {
        "management.tracing.enabled=true",
        // Camel's own spans too (opt-in): the flows' spans stay as they are beside them
        "camel.observation.enabled=true",
        "lockwatch.notify.retry-schedule=1s",
        "lockwatch.notify.poll-interval=100",
        "lockwatch.notify.circuit-failures=1000"})
// a context of its own, closed after the class: left to the cache, it would be closed only once the next class's
// context had started, and its shutdown takes JVM-wide registrations (the platform-http paths) with it
@org.springframework.test.annotation.DirtiesContext(classMode = org.springframework.test.annotation.DirtiesContext.ClassMode.AFTER_CLASS)
class TracingTest {

    static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();
    static final AttributeKey<String> NOTIFICATION = AttributeKey.stringKey("lockwatch.notification.id");

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @TestConfiguration
    static class Exporter {
        /** Exported as each span ends, so the test waits for spans, not for a batch's schedule. */
        @Bean
        SpanProcessor inMemorySpans() {
            return SimpleSpanProcessor.create(SPANS);
        }
    }

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired IngestProperties ingest;
    @Autowired org.apache.camel.CamelContext camel;

    @Test
    void aReadingsTraceGoesFromItsBatchThroughEveryDeliveryAttemptToTheClient() {
        String sensor = "T" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'Svobody st. 23')", sensor);
        String healthy = "/hook-" + UUID.randomUUID(), flaky = "/hook-" + UUID.randomUUID();
        link(client(healthy), sensor);
        link(client(flaky), sensor);
        receiver.answer(flaky, 503);

        String body = "{\"sensor_id\":\"" + sensor + "\",\"data\":0,\"ts\":" + (System.currentTimeMillis() - 1000) + "}";
        rabbit.send(ingest.exchange(), sensor, new Message(body.getBytes(StandardCharsets.UTF_8), new MessageProperties()));

        await().atMost(Duration.ofSeconds(10)).until(() -> receiver.at(flaky).size() == 1);
        receiver.answer(flaky, 200);
        await().atMost(Duration.ofSeconds(15)).until(() -> receiver.at(flaky).size() == 2 && receiver.at(healthy).size() == 1);

        List<Received> posts = List.of(receiver.at(healthy).get(0), receiver.at(flaky).get(0), receiver.at(flaky).get(1));
        List<String[]> parents = posts.stream().map(r -> r.header("traceparent")).peek(h ->
                assertThat(h).matches("00-[0-9a-f]{32}-[0-9a-f]{16}-01")).map(h -> h.split("-")).toList();
        String traceId = parents.get(0)[1];
        assertThat(parents).allSatisfy(p -> assertThat(p[1]).isEqualTo(traceId));
        assertThat(parents).extracting(p -> p[2]).doesNotHaveDuplicates();

        // the attempt spans end once recorded, just after the client has its answer
        await().atMost(Duration.ofSeconds(10)).until(() -> attempts(traceId).size() == 3);
        SpanData batch = SPANS.getFinishedSpanItems().stream()
                .filter(s -> s.getTraceId().equals(traceId) && s.getName().equals("ingest batch")).findFirst().orElseThrow();
        assertThat(batch.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(batch.getParentSpanContext().isValid()).isFalse();
        assertThat(batch.getAttributes().get(AttributeKey.stringKey("lockwatch.notifications"))).isEqualTo("2");

        List<SpanData> attempts = attempts(traceId);
        assertThat(attempts).allSatisfy(a -> {
            assertThat(a.getParentSpanId()).isEqualTo(batch.getSpanId());
            assertThat(a.getKind()).isEqualTo(SpanKind.CLIENT);
        });
        // each traceparent the client saw names its own attempt's span, with that attempt's outcome
        for (int i = 0; i < posts.size(); i++) {
            String spanId = parents.get(i)[2];
            SpanData attempt = attempts.stream().filter(a -> a.getSpanId().equals(spanId)).findFirst().orElseThrow();
            assertThat(attempt.getAttributes().get(NOTIFICATION)).isEqualTo(posts.get(i).header("webhook-id"));
        }
        SpanData failed = attempts.stream().filter(a -> a.getSpanId().equals(parents.get(1)[2])).findFirst().orElseThrow();
        assertThat(failed.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
        assertThat(failed.getAttributes().get(AttributeKey.stringKey("http.response.status_code"))).isEqualTo("503");
        assertThat(failed.getAttributes().get(AttributeKey.stringKey("network.protocol.version"))).isEqualTo("1.1");
        assertThat(failed.getAttributes().get(AttributeKey.stringKey("lockwatch.outcome"))).isEqualTo("retry");
        SpanData retried = attempts.stream().filter(a -> a.getSpanId().equals(parents.get(2)[2])).findFirst().orElseThrow();
        assertThat(retried.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);
        assertThat(retried.getAttributes().get(AttributeKey.stringKey("lockwatch.attempt"))).isEqualTo("2");
        assertThat(retried.getAttributes().get(AttributeKey.stringKey("lockwatch.outcome"))).isEqualTo("delivered");

        // the outbox keeps the batch's context, which is how an attempt on any instance finds its parent
        assertThat(jdbc.queryForList("SELECT trace_parent FROM notifications WHERE sensor_id = ?", String.class, sensor))
                .hasSize(2).allSatisfy(t -> assertThat(t).isEqualTo("00-" + traceId + "-" + batch.getSpanId() + "-01"));
    }

    @Test
    void camelsOwnRouteTracingIsOnWhenAskedFor() {
        assertThat(camel.hasService(org.apache.camel.observation.MicrometerObservationTracer.class)).isNotNull();
    }

    private static List<SpanData> attempts(String traceId) {
        return SPANS.getFinishedSpanItems().stream()
                .filter(s -> s.getTraceId().equals(traceId) && s.getName().equals("webhook POST")).toList();
    }

    private UUID client(String path) {
        return jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES ('traced', ?, ?) RETURNING id",
                UUID.class, receiver.url(path), WebhookSigner.newSecret());
    }

    private void link(UUID client, String sensor) {
        jdbc.update("INSERT INTO client_sensors (client_id, sensor_id) VALUES (?, ?)", client, sensor);
    }
}
