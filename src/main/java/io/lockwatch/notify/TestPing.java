package io.lockwatch.notify;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A signed {@code webhook.test} event sent to a client at once, outside its queues, so that an operator can see
 * whether the endpoint answers and verifies lockwatch's signature: prepare, call, and the answer as a result.
 * Posted like a webhook: the same guard, timeouts, signatures, and no redirects. It goes through the client's lane,
 * so a burst of pings to a slow endpoint holds at most that lane's slots, never other clients' connections: it waits
 * for a free slot of the lane up to the attempt's timeout (the circuit does not stop it: a ping is how an endpoint
 * whose circuit is open is checked), and at most {@value #AT_ONCE} pings are in flight in an instance. A client that
 * takes batches ({@code max_events_per_request} above 1) gets the event in an array of one, as it gets every event:
 * the ping checks the parser that its webhooks will meet.
 */
public class TestPing {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What the endpoint answered: its status (null without an answer), how long it took, and the error if any. */
    public record Result(Integer statusCode, long durationMs, String error) {
    }

    /** Pings in flight at once in an instance; the poster's connection pool has room for them beside the lanes'. */
    static final int AT_ONCE = 8;

    private final NotificationStore store;
    private final TargetGuard guard;
    private final WebhookPoster poster;
    private final Lanes lanes;
    private final java.time.Duration wait;
    private final java.util.concurrent.Semaphore atOnce = new java.util.concurrent.Semaphore(AT_ONCE);

    /** @param wait how long a ping waits for a free slot of its client's lane */
    public TestPing(NotificationStore store, TargetGuard guard, WebhookPoster poster, Lanes lanes, java.time.Duration wait) {
        this.store = store;
        this.guard = guard;
        this.poster = poster;
        this.lanes = lanes;
        this.wait = wait;
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
            body = JSON.writeValueAsString(target.maxEventsPerRequest() > 1 ? List.of(event) : event);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        long started = System.nanoTime();
        if (!atOnce.tryAcquire()) {
            return new Result(null, 0, "not sent: " + AT_ONCE + " test pings are in flight in this instance already");
        }
        try {
            if (!lanes.enterOutsideTheClaims(client, wait)) {
                return new Result(null, (System.nanoTime() - started) / 1_000_000,
                        "not sent: the client's lane had no free slot for " + wait.toMillis() + " ms");
            }
            try {
                long timestamp = Instant.now().getEpochSecond();
                String signature = WebhookSigner.header(target.secret(), target.previousSecret(), id, timestamp, body);
                long sent = System.nanoTime();
                WebhookPoster.Answer answer = poster.send(target.url(), Map.of("webhook-id", id,
                        "webhook-timestamp", String.valueOf(timestamp), "webhook-signature", signature), body);
                return new Result(answer.status(), (System.nanoTime() - sent) / 1_000_000, answer.error());
            } finally {
                lanes.giveBack(client);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(null, (System.nanoTime() - started) / 1_000_000, "not sent: interrupted");
        } finally {
            atOnce.release();
        }
    }
}
