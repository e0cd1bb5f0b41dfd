package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
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

    /** Written before the request goes on (SecurityConfiguration): still there, once each, on an answer of Camel's. */
    @Test
    void theSecurityHeadersComeOnceWithAnAnswerWrittenOnCamelsThread() throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/v1/sensors?limit=1"))
                .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + ApiTest.ADMIN).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().allValues("X-Content-Type-Options")).containsExactly("nosniff");
        assertThat(r.headers().allValues("X-Frame-Options")).containsExactly("DENY");
        assertThat(r.headers().allValues("Cache-Control")).singleElement().asString().contains("no-store");
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

    /**
     * A body over the API's limit (1 MB) is a 413 problem, whether it declares its length or comes chunked (issue
     * 36: 300 MB sent as curl -T - does were read whole); the chunked one is not read past the limit. Its sender
     * would go on for 300 MB: the answer comes while it still has most of it to send.
     */
    @Test
    void aBodyOverTheLimitIsA413WithOrWithoutALength() throws Exception {
        byte[] twoMegabytes = new byte[2 * 1024 * 1024];
        java.util.Arrays.fill(twoMegabytes, (byte) ' ');
        Answer declared = send("POST", "/readings", Map.of("Content-Type", "application/json"), twoMegabytes);
        assertThat(declared.status()).isEqualTo(413);
        assertThat(declared.contentType()).startsWith("application/problem+json");
        assertThat(declared.body().get("detail").asText()).contains("1024 KB").contains("lockwatch.api.max-body");

        java.util.concurrent.atomic.AtomicLong sent = new java.util.concurrent.atomic.AtomicLong();
        long endless = 300L * 1024 * 1024;
        java.io.InputStream spaces = new java.io.InputStream() {
            @Override
            public int read() {
                return sent.getAndIncrement() < endless ? ' ' : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                long left = endless - sent.get();
                if (left <= 0) {
                    return -1;
                }
                int n = (int) Math.min(len, left);
                java.util.Arrays.fill(b, off, off + n, (byte) ' ');
                sent.addAndGet(n);
                return n;
            }
        };
        HttpRequest chunked = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/v1/readings"))
                .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + ApiTest.ADMIN)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> spaces)).build();
        HttpResponse<String> r;
        try {
            r = HTTP.send(chunked, HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            // the service answered and closed while the client still wrote: the JDK client may report that instead
            assertThat(sent.get()).isLessThan(endless / 2);
            return;
        }
        assertThat(r.statusCode()).isEqualTo(413);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
        assertThat(sent.get()).as("bytes the client got to send").isLessThan(endless / 2);

        // within the limit: taken as before
        Answer small = send("POST", "/readings", Map.of("Content-Type", "application/json"),
                "{\"sensor_id\":\"Ok\",\"data\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(small.status()).isLessThan(300);
    }

    /**
     * A request for another host name (a page that rebound its own name to 127.0.0.1) is a 421 on every path, the
     * documented token's own included; the loopback names are answered (issue 36).
     */
    @Test
    void onlyTheAllowedHostNamesAreAnswered() throws Exception {
        for (String path : List.of("/api/v1/sensors", "/actuator/health", "/console/")) {
            String answer = rawGet(path, "evil.example");
            assertThat(answer).as(path).startsWith("HTTP/1.1 421 ").contains("application/problem+json")
                    .contains("lockwatch.http.allowed-hosts").containsIgnoringCase("X-Correlation-Id: ");
            assertThat(rawGet(path, "EVIL.example:" + port)).as(path).startsWith("HTTP/1.1 421 ");
        }
        assertThat(rawGet("/api/v1/sensors", "localhost:" + port)).startsWith("HTTP/1.1 200 ");
        assertThat(rawGet("/api/v1/sensors", "127.0.0.1:" + port)).startsWith("HTTP/1.1 200 ");
        assertThat(rawGet("/api/v1/sensors", "[::1]:" + port)).startsWith("HTTP/1.1 200 ");
    }

    /** A GET with the given Host (the JDK's client sets Host itself), with the full token; the answer's head and body. */
    private String rawGet(String path, String host) throws Exception {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer "
                    + ApiTest.ADMIN + "\r\nConnection: close\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            return new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /** A body that is not JSON, or only white space, is a 400 that says so in plain words, not the parser's. */
    @Test
    void aBodyThatIsNotJsonIsA400SayingSo() throws Exception {
        for (String body : List.of("hello", "   ", "{\"sensor_id\":", "\uFEFF[]]")) {
            for (String path : List.of("/readings", "/clients", "/sensors")) {
                Answer a = send("POST", path, Map.of("Content-Type", "application/json"),
                        body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                assertThat(a.status()).as("%s %s", path, body).isEqualTo(400);
                assertThat(a.body().get("detail").asText()).as("%s %s", path, body).startsWith("the request body is not valid JSON")
                        .doesNotContain("token").doesNotContain("Source");
            }
        }
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
