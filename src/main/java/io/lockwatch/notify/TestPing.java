package io.lockwatch.notify;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A signed {@code webhook.test} event sent to a client at once, outside its queues, so that an operator can see
 * whether the endpoint answers and verifies lockwatch's signature: prepare, call, and the answer as a result.
 * Posted like a webhook: the same guard, timeouts, signatures, and no redirects.
 */
public class TestPing {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What the endpoint answered: its status (null without an answer), how long it took, and the error if any. */
    public record Result(Integer statusCode, long durationMs, String error) {
    }

    private final NotificationStore store;
    private final TargetGuard guard;
    private final NotifyProperties props;
    private final HttpClient http;

    public TestPing(NotificationStore store, TargetGuard guard, NotifyProperties props) {
        this.store = store;
        this.guard = guard;
        this.props = props;
        this.http = HttpClient.newBuilder().connectTimeout(props.connectTimeout())
                .followRedirects(HttpClient.Redirect.NEVER).build();
    }

    /** @return null if there is no such client */
    public Result send(UUID client) {
        NotificationStore.Target target = store.target(client);
        if (target == null) {
            return null;
        }
        String refused = guard.problemWith(target.url());
        if (refused != null) {
            return new Result(null, 0, "target refused: " + refused);
        }
        String id = "test_" + UUID.randomUUID();
        String body;
        try {
            Map<String, Object> event = new LinkedHashMap<>();
            event.put("id", id);
            event.put("type", "webhook.test");
            event.put("client_id", client.toString());
            event.put("sent_at", Instant.now().truncatedTo(ChronoUnit.MILLIS).toString());
            body = JSON.writeValueAsString(event);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        long timestamp = Instant.now().getEpochSecond();
        String signature = WebhookSigner.header(target.secret(), target.previousSecret(), id, timestamp, body);
        HttpRequest request = HttpRequest.newBuilder(URI.create(target.url())).timeout(props.timeout())
                .header("Content-Type", "application/json").header("User-Agent", "lockwatch-webhooks/1")
                .header("webhook-id", id).header("webhook-timestamp", String.valueOf(timestamp))
                .header("webhook-signature", signature)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        long started = System.nanoTime();
        try {
            int status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
            long took = (System.nanoTime() - started) / 1_000_000;
            return new Result(status, took, status >= 200 && status < 300 ? null : "HTTP " + status);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(null, (System.nanoTime() - started) / 1_000_000, "interrupted");
        } catch (Exception e) {
            String why = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
            return new Result(null, (System.nanoTime() - started) / 1_000_000, why);
        }
    }
}
