package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The answers that are not an operation's own: a real fault is a 500 whose correlation id names its log line; every
 * refusal by the container, by Spring's dispatch or by a filter is problem+json, never an HTML page.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class HttpErrorsTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @LocalServerPort int port;
    @Autowired JdbcTemplate jdbc;

    record Answer(int status, String contentType, String correlationId, int correlationIds, JsonNode body) {
    }

    @Test
    void aFaultOfTheServiceIsA500WhoseCorrelationIdNamesItsLogLine() throws Exception {
        Answer created = send("POST", "/clients", Map.of("Content-Type", "application/json"),
                JSON.writeValueAsBytes(Map.of("name", "faulty", "url", "https://hooks.example.com/x")));
        String client = created.body().get("id").asText();
        Logger logger = (Logger) LoggerFactory.getLogger(Problems.class);
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        logger.addAppender(log);
        Answer answer;
        // a real fault, not a stub: the table the statistics are read from is gone for the length of one request
        jdbc.execute("ALTER TABLE delivery_attempts RENAME TO delivery_attempts_away");
        try {
            answer = send("GET", "/clients/" + client + "/delivery-stats", Map.of(), null);
        } finally {
            jdbc.execute("ALTER TABLE delivery_attempts_away RENAME TO delivery_attempts");
            logger.detachAppender(log);
        }

        assertThat(answer.status()).isEqualTo(500);
        assertThat(answer.contentType()).startsWith("application/problem+json");
        assertThat(answer.correlationIds()).isEqualTo(1);
        String id = answer.correlationId();
        assertThat(id).matches("[0-9a-f]{16}");
        assertThat(answer.body().get("correlation_id").asText()).isEqualTo(id);
        assertThat(answer.body().get("detail").asText()).contains(id).doesNotContain("delivery_attempts");
        assertThat(log.list).anySatisfy(e -> {
            assertThat(e.getFormattedMessage()).contains("correlation id " + id);
            assertThat(e.getThrowableProxy()).isNotNull();
            assertThat(e.getThrowableProxy().getMessage() + e.getThrowableProxy().getCause()).contains("delivery_attempts");
        });
    }

    @Test
    void aDatabaseThatIsAwayIsAQuick503WithRetryAfterNotAHeldRequest() throws Exception {
        String id = "Ro" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        Answer answer;
        HttpResponse<String> raw;
        // away for writing: PostgreSQL read-only, as after a fail-over to a replica
        readOnly(true);
        try {
            raw = HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/v1/sensors"))
                    .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + ApiTest.ADMIN)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"id\":\"" + id + "\",\"address\":\"door\"}")).build(),
                    HttpResponse.BodyHandlers.ofString());
        } finally {
            readOnly(false);
        }

        assertThat(raw.statusCode()).isEqualTo(503);
        assertThat(raw.headers().firstValue("Retry-After")).hasValue("5");
        assertThat(raw.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
        JsonNode body = JSON.readTree(raw.body());
        assertThat(body.get("correlation_id").asText()).isEqualTo(raw.headers().firstValue("X-Correlation-Id").orElseThrow());
        // nothing was changed; with the database back, the same request succeeds
        assertThat(send("POST", "/sensors", Map.of("Content-Type", "application/json"),
                ("{\"id\":\"" + id + "\",\"address\":\"door\"}").getBytes(StandardCharsets.UTF_8)).status()).isEqualTo(201);
    }

    private void readOnly(boolean on) {
        io.lockwatch.testing.Databases.readOnly(jdbc, on);
    }

    @Test
    void aCallersCorrelationIdIsKeptAndAnUnusableOneReplaced() throws Exception {
        Answer kept = send("GET", "/sensors?limit=1", Map.of("X-Correlation-Id", "gateway-7.req:42"), null);
        assertThat(kept.correlationId()).isEqualTo("gateway-7.req:42");
        assertThat(kept.correlationIds()).as("the header once, not echoed twice").isEqualTo(1);
        assertThat(send("GET", "/sensors?limit=1", Map.of("X-Correlation-Id", "no spaces <allowed>"), null).correlationId())
                .matches("[0-9a-f]{16}");
        assertThat(send("GET", "/sensors?limit=1", Map.of(), null).correlationId()).matches("[0-9a-f]{16}");
    }

    @Test
    void headersTooLargeForTheContainerGetAProblemNotItsHtmlPage() throws Exception {
        Answer answer = send("GET", "/sensors", Map.of("X-Filler", "a".repeat(20_000)), null);

        assertThat(answer.status()).isEqualTo(400);
        assertThat(answer.contentType()).startsWith("application/problem+json");
        assertThat(answer.body().get("status").asInt()).isEqualTo(400);
    }

    @Test
    void anAcceptTheApiCannotMeetIsA406Problem() throws Exception {
        Answer answer = send("GET", "/sensors", Map.of("Accept", "text/html"), null);

        assertThat(answer.status()).isEqualTo(406);
        assertThat(answer.contentType()).startsWith("application/problem+json");
        assertThat(answer.body().get("detail").asText()).contains("application/json");
    }

    @Test
    void aCompressedOrMultipartBodyIsA415Problem() throws Exception {
        byte[] notGzip = "{\"id\":\"abc\",\"address\":\"x\"}".getBytes(StandardCharsets.UTF_8);
        Answer gzip = send("POST", "/sensors", Map.of("Content-Type", "application/json", "Content-Encoding", "gzip"), notGzip);
        Answer multipart = send("POST", "/sensors", Map.of("Content-Type", "multipart/form-data"), notGzip);

        assertThat(gzip.status()).isEqualTo(415);
        assertThat(gzip.body().get("detail").asText()).contains("Content-Encoding gzip");
        assertThat(multipart.status()).isEqualTo(415);
        assertThat(multipart.contentType()).startsWith("application/problem+json");
    }

    @Test
    void textWithANulIsRefusedWithTheFieldNamed() throws Exception {
        String id = "Nul" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        Answer answer = send("POST", "/sensors", Map.of("Content-Type", "application/json"),
                ("{\"id\":\"" + id + "\",\"address\":\"door\\u0000one\"}").getBytes(StandardCharsets.UTF_8));

        assertThat(answer.status()).isEqualTo(400);
        assertThat(answer.body().get("field").asText()).isEqualTo("address");
        assertThat(send("GET", "/sensors/" + id, Map.of(), null).status()).isEqualTo(404);
    }

    private Answer send(String method, String path, Map<String, String> headers, byte[] body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/v1" + path))
                .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + ApiTest.ADMIN)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        headers.forEach(b::header);
        HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        JsonNode json = r.body() == null || r.body().isBlank() ? null : JSON.readTree(r.body());
        return new Answer(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""),
                r.headers().firstValue("X-Correlation-Id").orElse(null), r.headers().allValues("X-Correlation-Id").size(), json);
    }
}
