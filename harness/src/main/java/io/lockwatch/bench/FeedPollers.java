package io.lockwatch.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * {@code --feed-pollers N}: the first N clients also pull their feeds, each with one long poll open at all times
 * ({@code wait}), as a client behind a firewall would: read, take the items, read on from the cursor at once. Each
 * item is stamped on the answer's arrival; its latency is that minus the event's {@code occurred_at}, as for
 * webhooks. All polls share one HTTP client (its own small thread pool): the harness holds no thread per poll either.
 */
final class FeedPollers implements AutoCloseable {

    /** The first arrival of an event at a client's feed. */
    record Item(int client, long eventId, long occurredAtMs, long arrivedAtMs) {
        long latencyMs() {
            return arrivedAtMs - occurredAtMs;
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final List<String> clientIds;
    private final int waitSeconds;
    private final HttpClient http;
    private final Map<String, Item> items = new ConcurrentHashMap<>();
    private final Set<String> open = ConcurrentHashMap.newKeySet();
    private final AtomicLong answers = new AtomicLong();
    private final AtomicLong repeats = new AtomicLong();
    private final ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
    private volatile boolean closed;

    FeedPollers(URI base, List<String> clientIds, int waitSeconds) {
        this.base = base;
        this.clientIds = clientIds;
        this.waitSeconds = waitSeconds;
        // HTTP/1.1: one connection per open poll, as 1,000 separate clients would hold
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    /** Every poller reads its feed's place now (the snapshot's feed_cursor), then keeps a long poll open from it. */
    void start() throws Exception {
        for (int c = 0; c < clientIds.size(); c++) {
            JsonNode snapshot = JSON.readTree(http.send(request("/api/v1/clients/" + clientIds.get(c) + "/sensors?limit=1", 30),
                    HttpResponse.BodyHandlers.ofString()).body());
            poll(c, snapshot.get("feed_cursor").asText());
        }
    }

    private void poll(int client, String after) {
        if (closed) {
            return;
        }
        String id = clientIds.get(client);
        open.add(id);
        http.sendAsync(request("/api/v1/clients/" + id + "/feed?limit=1000&wait=" + waitSeconds + "&after=" + after,
                        waitSeconds + 30), HttpResponse.BodyHandlers.ofString())
                .whenComplete((response, failure) -> {
                    long arrived = System.currentTimeMillis();
                    open.remove(id);
                    String next = after;
                    if (failure != null || response.statusCode() != 200) {
                        if (!closed) {
                            errors.add(failure != null ? failure.toString() : "HTTP " + response.statusCode());
                        }
                    } else {
                        answers.incrementAndGet();
                        try {
                            JsonNode page = JSON.readTree(response.body());
                            for (JsonNode item : page.get("items")) {
                                long event = item.get("event_id").asLong();
                                Item seen = new Item(client, event,
                                        Instant.parse(item.get("occurred_at").asText()).toEpochMilli(), arrived);
                                if (items.putIfAbsent(client + "/" + event, seen) != null) {
                                    repeats.incrementAndGet();
                                }
                            }
                            next = page.get("next_cursor").asText();
                        } catch (Exception e) {
                            errors.add(e.toString());
                        }
                    }
                    poll(client, next);
                });
    }

    private HttpRequest request(String path, int timeoutSeconds) {
        return HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(timeoutSeconds))
                .header("Authorization", "Bearer " + ServiceProcess.API_TOKEN).GET().build();
    }

    /** Polls open now. */
    int open() {
        return open.size();
    }

    long answers() {
        return answers.get();
    }

    /** Events a client was given twice (a cursor that went back would show here). */
    long repeats() {
        return repeats.get();
    }

    List<String> errors() {
        return new ArrayList<>(errors);
    }

    /** Latencies (ms, sorted) of the items whose event occurred in [fromMs, toMs). */
    long[] latencies(long fromMs, long toMs) {
        return items.values().stream().filter(i -> i.occurredAtMs() >= fromMs && i.occurredAtMs() < toMs)
                .mapToLong(Item::latencyMs).sorted().toArray();
    }

    /** Items received, of events that occurred in [fromMs, toMs). */
    long received(long fromMs, long toMs) {
        return items.values().stream().filter(i -> i.occurredAtMs() >= fromMs && i.occurredAtMs() < toMs).count();
    }

    @Override
    public void close() {
        closed = true;
    }
}
