package io.lockwatch.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.notify.WebhookReceiver;

/** The service's API as a route test calls it over HTTP, and what a webhook receiver got, as JSON. */
public final class Api {

    public static final String ADMIN = "test-admin-token", READER = "test-read-token";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** An answer: its status and its body (null if it had none). */
    public record Answer(int status, JsonNode body) {
    }

    private final int port;
    private final Duration timeout;

    public Api(int port) {
        this(port, Duration.ofSeconds(10));
    }

    /** With a longer wait for each answer than the 10 s by default: a long poll's. */
    public Api(int port, Duration timeout) {
        this.port = port;
        this.timeout = timeout;
    }

    /** The API's root, {@code http://localhost:<port>/api/v1}. */
    public String base() {
        return "http://localhost:" + port + "/api/v1";
    }

    /** {@code path} under /api/v1; a body is sent as JSON. */
    public Answer call(String method, String path, String token, Object body) throws Exception {
        HttpResponse<String> r = send(method, "/api/v1" + path, "Bearer " + token,
                body == null ? null : JSON.writeValueAsString(body));
        return new Answer(r.statusCode(), r.body() == null || r.body().isBlank() ? null : JSON.readTree(r.body()));
    }

    /**
     * The answer as it came, for what {@link #call} does not cover: any path from the server's root, any
     * {@code Authorization} (or none: null), a body sent as JSON, an answer that is not JSON.
     */
    public HttpResponse<String> send(String method, String path, String authorization, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).timeout(timeout);
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        if (body != null) {
            b.header("Content-Type", "application/json");
        }
        b.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A client posting to the receiver at {@code path}, with these more fields; its id. */
    public String client(WebhookReceiver receiver, String path, Map<String, Object> more) throws Exception {
        Map<String, Object> body = new java.util.HashMap<>(more);
        body.putIfAbsent("name", "test client");
        body.put("url", receiver.url(path));
        Answer created = call("POST", "/clients", ADMIN, body);
        assertThat(created.status()).as(String.valueOf(created.body())).isEqualTo(201);
        return created.body().get("id").asText();
    }

    public String client(WebhookReceiver receiver, String path) throws Exception {
        return client(receiver, path, Map.of());
    }

    public void link(String client, String sensor) throws Exception {
        assertThat(call("PUT", "/clients/" + client + "/sensors/" + sensor, ADMIN, null).status()).isLessThan(300);
    }

    /** What the receiver got at {@code path}, in order of arrival. */
    public static List<JsonNode> bodies(WebhookReceiver receiver, String path) throws Exception {
        List<JsonNode> bodies = new ArrayList<>();
        for (WebhookReceiver.Received r : receiver.at(path)) {
            bodies.add(JSON.readTree(r.body()));
        }
        return bodies;
    }
}
