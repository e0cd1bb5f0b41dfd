package io.lockwatch.notify;

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
    private final WebhookPoster poster;

    public TestPing(NotificationStore store, TargetGuard guard, WebhookPoster poster) {
        this.store = store;
        this.guard = guard;
        this.poster = poster;
    }

    /** @return null if there is no such client */
    public Result send(UUID client) {
        NotificationStore.Target target = store.target(client);
        if (target == null) {
            return null;
        }
        String refused = target.secret() == null ? NotificationStore.SECRET_UNOPENED : guard.problemWithForm(target.url());
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
        long started = System.nanoTime();
        WebhookPoster.Answer answer = poster.send(target.url(), Map.of("webhook-id", id,
                "webhook-timestamp", String.valueOf(timestamp), "webhook-signature", signature), body);
        long took = (System.nanoTime() - started) / 1_000_000;
        return new Result(answer.status(), took, answer.error());
    }
}
