package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.notify.Feed;
import io.lockwatch.notify.FeedWatch;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.Readings;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;

/**
 * The feed on a port of its own (lockwatch.feed.listener.port), on the embedded default: a long poll held until its
 * client's event and answered with the page the API gives; the API's tokens, keys and scope (404 for another's); the
 * contract's parameters and problems; requests on one connection answered in order; nothing but the feed served.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "lockwatch.feed.listener.port=0")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class FeedListenerTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    static final ObjectMapper JSON = new ObjectMapper();

    @Autowired FeedListener listener;
    @Autowired Feed feed;
    @Autowired FeedWatch watch;
    @Autowired RabbitTemplate rabbit;
    @Autowired IngestProperties ingest;
    @Autowired JdbcTemplate jdbc;
    @LocalServerPort int port;
    Api api;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeEach
    void api() {
        api = new Api(port);
    }

    @Test
    void aLongPollIsHeldUntilItsClientsEventAndAnsweredWithTheApisPage() throws Exception {
        String client = api.client(receiver, "/listener-poll");
        String s = sensor(), other = sensor();
        api.link(client, s);
        String key = key(client, "client-read");
        String cursor = feed.head();
        int before = watch.waiting();

        CompletableFuture<HttpResponse<String>> poll = http.sendAsync(get("/api/v1/clients/" + client + "/feed?wait=60&after="
                + cursor, key).build(), HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(10)).until(() -> watch.waiting() == before + 1);
        publish(other, 0);
        await().atMost(Duration.ofSeconds(10)).until(() -> sequence(other) == 1);
        assertThat(poll).as("another client's sensor wakes nothing").isNotDone();

        publish(s, 0);
        HttpResponse<String> answer = poll.get(50, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.headers().firstValue("Content-Type")).hasValue("application/json");
        JsonNode page = JSON.readTree(answer.body());
        assertThat(page.get("items")).hasSize(1);
        assertThat(page.at("/items/0/sensor_id").asText()).isEqualTo(s);
        // its items (the cursor after them moves on with other clients' events, here as on the API's port)
        assertThat(page.get("items")).as("the page the API's route gives for the same cursor").isEqualTo(
                api.call("GET", "/clients/" + client + "/feed?after=" + cursor, Api.READER, null).body().get("items"));
        assertThat(watch.waiting()).isEqualTo(before);

        // without wait: at once, empty after the last cursor
        HttpResponse<String> now = send(get("/api/v1/clients/" + client + "/feed?after=" + page.get("next_cursor").asText(), key));
        assertThat(now.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(now.body()).get("items")).isEmpty();
    }

    /** Operators' tokens and clients' own keys; another's client or one that does not exist is 404 alike. */
    @Test
    void theApisTokensAndKeysWithTheirScope() throws Exception {
        String mine = api.client(receiver, "/listener-mine"), theirs = api.client(receiver, "/listener-theirs");
        String key = key(mine, "client-read");
        String feedOf = "/api/v1/clients/%s/feed";

        HttpResponse<String> none = send(get(feedOf.formatted(mine), null));
        assertThat(none.statusCode()).isEqualTo(401);
        assertThat(none.headers().firstValue("WWW-Authenticate")).hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
        assertThat(none.headers().firstValue("Content-Type")).hasValue(Problems.CONTENT_TYPE);
        assertThat(send(get(feedOf.formatted(mine), "not-a-token")).statusCode()).isEqualTo(401);
        assertThat(send(get(feedOf.formatted(mine), key + "x")).statusCode()).as("a key's secret changed").isEqualTo(401);

        assertThat(send(get(feedOf.formatted(mine), key)).statusCode()).isEqualTo(200);
        assertThat(send(get(feedOf.formatted(mine), Api.READER)).statusCode()).isEqualTo(200);
        assertThat(send(get(feedOf.formatted(mine), Api.ADMIN)).statusCode()).isEqualTo(200);
        assertThat(send(get(feedOf.formatted(mine), key(mine, "client-admin"))).statusCode()).isEqualTo(200);

        String nobodysId = UUID.randomUUID().toString();
        HttpResponse<String> another = send(get(feedOf.formatted(theirs), key));
        HttpResponse<String> nobody = send(get(feedOf.formatted(nobodysId), key));
        assertThat(another.statusCode()).isEqualTo(404);
        assertThat(another.body().replace(theirs, "ID")).as("another's client answered as one that does not exist")
                .isEqualTo(nobody.body().replace(nobodysId, "ID"));
        assertThat(send(get(feedOf.formatted(UUID.randomUUID()), Api.READER)).statusCode()).isEqualTo(404);
        assertThat(send(get(feedOf.formatted(theirs), Api.READER)).statusCode()).isEqualTo(200);
        assertThat(send(get(feedOf.formatted(mine), key).header("Accept", "text/html")).statusCode()).isEqualTo(406);
    }

    /** The contract's bounds, each answered with the field at fault; anything but the feed is not here. */
    @Test
    void theContractsParametersAndNothingElse() throws Exception {
        String client = api.client(receiver, "/listener-params");
        String feedOf = "/api/v1/clients/" + client + "/feed";
        for (Map.Entry<String, String> bad : Map.of("?wait=61", "wait", "?wait=x", "wait", "?wait=", "wait", "?limit=0", "limit",
                "?limit=1001", "limit", "?after=12x", "after", "?after=" + "1".repeat(43), "after").entrySet()) {
            HttpResponse<String> refused = send(get(feedOf + bad.getKey(), Api.READER));
            assertThat(refused.statusCode()).as(bad.getKey()).isEqualTo(400);
            assertThat(JSON.readTree(refused.body()).get("field").asText()).as(bad.getKey()).isEqualTo(bad.getValue());
        }
        assertThat(send(get(feedOf + "?limit=1000&wait=0", Api.READER)).statusCode()).isEqualTo(200);
        assertThat(send(get(feedOf + "?wait=00", Api.READER)).statusCode()).as("0, written with two digits").isEqualTo(200);

        assertThat(send(get("/api/v1/clients/" + client, Api.ADMIN)).statusCode()).as("the API is not here").isEqualTo(404);
        assertThat(send(get("/actuator/health", Api.ADMIN)).statusCode()).isEqualTo(404);
        assertThat(send(get("/api/v1/clients/" + client + "/feed/../keys", Api.ADMIN)).statusCode()).isEqualTo(404);
        HttpResponse<String> post = send(get(feedOf, Api.ADMIN).POST(HttpRequest.BodyPublishers.ofString("{}")));
        assertThat(post.statusCode()).isEqualTo(405);
        assertThat(post.headers().firstValue("Allow")).hasValue("GET, HEAD");
    }

    /**
     * A cursor past the feed's end is no cursor the feed gave: a reader holding it would never see another event.
     * Refused naming the parameter, at once and held alike (a wait far beyond the request's own timeout).
     */
    /** A cursor of the right form past any end a feed could have: the last place there is. */
    static final String PAST_ANY_END = Long.MAX_VALUE + "." + Long.MAX_VALUE;

    @Test
    void aCursorPastTheFeedsEndIsRefused() throws Exception {
        String client = api.client(receiver, "/listener-past-end");
        String feedOf = "/api/v1/clients/" + client + "/feed?after=" + PAST_ANY_END;
        for (String wait : new String[] {"", "&wait=60"}) {
            HttpResponse<String> refused = send(get(feedOf + wait, Api.READER).timeout(Duration.ofSeconds(30)));
            assertThat(refused.statusCode()).as(wait).isEqualTo(400);
            assertThat(JSON.readTree(refused.body()).get("field").asText()).isEqualTo("after");
            assertThat(JSON.readTree(refused.body()).get("detail").asText()).contains("past the feed's end");
        }
        // the feed's own end is a cursor it gives
        assertThat(send(get("/api/v1/clients/" + client + "/feed?after=" + feed.head(), Api.READER)).statusCode()).isEqualTo(200);
    }

    /** A HEAD is a GET's answer without its body, and answered at once, not held. */
    @Test
    void aHeadIsAGetsAnswerWithoutItsBody() throws Exception {
        String client = api.client(receiver, "/listener-head");
        String feedOf = "/api/v1/clients/" + client + "/feed?wait=60&after=" + feed.head();
        HttpResponse<String> head = send(get(feedOf, Api.READER).method("HEAD", HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(30)));
        assertThat(head.statusCode()).isEqualTo(200);
        assertThat(head.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(Integer.parseInt(head.headers().firstValue("Content-Length").orElseThrow())).isPositive();
        assertThat(head.body()).isEmpty();
        HttpResponse<String> other = send(get("/api/v1/clients/" + UUID.randomUUID() + "/feed", Api.READER)
                .method("HEAD", HttpRequest.BodyPublishers.noBody()));
        assertThat(other.statusCode()).isEqualTo(404);
        assertThat(other.body()).isEmpty();
    }

    /** Two requests sent at once on one connection are answered in order, the connection kept for more. */
    @Test
    void requestsOnOneConnectionAreAnsweredInOrder() throws Exception {
        String client = api.client(receiver, "/listener-pipelined");
        String request = "GET /api/v1/clients/%s/feed?limit=%d HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                + Api.READER + "\r\n\r\n";
        try (Socket socket = new Socket("127.0.0.1", listener.port())) {
            socket.setSoTimeout(20_000);
            OutputStream out = socket.getOutputStream();
            out.write((request.formatted(client, 3) + request.formatted(UUID.randomUUID(), 3) + request.formatted(client, 4))
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            assertThat(statusOf(in)).isEqualTo(200);
            assertThat(statusOf(in)).isEqualTo(404);
            assertThat(statusOf(in)).isEqualTo(200);
        }
    }

    /** Reads one answer (status line, headers, a body of Content-Length); its status. */
    private static int statusOf(InputStream in) throws Exception {
        String status = line(in);
        int length = 0;
        for (String header = line(in); !header.isEmpty(); header = line(in)) {
            if (header.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(header.substring(15).trim());
            }
        }
        assertThat(in.readNBytes(length)).hasSize(length);
        return Integer.parseInt(status.split(" ")[1]);
    }

    private static String line(InputStream in) throws Exception {
        StringBuilder line = new StringBuilder();
        for (int c = in.read(); c != '\n'; c = in.read()) {
            assertThat(c).as("the connection ended mid-answer").isNotEqualTo(-1);
            if (c != '\r') {
                line.append((char) c);
            }
        }
        return line.toString();
    }

    private HttpRequest.Builder get(String path, String token) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + listener.port() + path))
                .timeout(Duration.ofSeconds(90));
        return token == null ? b : b.header("Authorization", "Bearer " + token);
    }

    private HttpResponse<String> send(HttpRequest.Builder request) throws Exception {
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private String key(String client, String role) throws Exception {
        Api.Answer made = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "feed", "role", role));
        assertThat(made.status()).as(String.valueOf(made.body())).isEqualTo(201);
        return made.body().get("token").asText();
    }

    private String sensor() {
        String id = "L" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address) VALUES (?, 'listener door')", id);
        return id;
    }

    private long sequence(String sensor) {
        Long n = jdbc.queryForObject("SELECT coalesce(sequence, 0) FROM sensor_state WHERE sensor_id = ?", Long.class, sensor);
        return n == null ? 0 : n;
    }

    private void publish(String sensor, int data) {
        rabbit.send(ingest.exchange(), sensor, Readings.reading(sensor, data, System.currentTimeMillis()));
    }
}
