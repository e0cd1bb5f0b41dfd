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
 * webhooks. Each client reads with a client-read key of its own. All polls share one HTTP client (its own small
 * thread pool): the harness holds no thread per poll either.
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
    /** Each client's own client-read key: a pulling client reads with its key, not the operator's token. */
    private final Map<String, String> keys = new ConcurrentHashMap<>();
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

    /**
     * Every poller is given a client-read key of its client (by the operator), reads its feed's place with it (the
     * snapshot's feed_cursor), then keeps a long poll open from there.
     */
    void start() throws Exception {
        for (int c = 0; c < clientIds.size(); c++) {
            String id = clientIds.get(c);
            HttpResponse<String> made = http.send(HttpRequest.newBuilder(base.resolve("/api/v1/clients/" + id + "/keys"))
                    .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + ServiceProcess.API_TOKEN)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"bench feed poller\",\"role\":\"client-read\"}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            if (made.statusCode() != 201 && made.statusCode() != 200) {
                throw new IllegalStateException("a key for client " + id + ": HTTP " + made.statusCode() + " " + made.body());
            }
            keys.put(id, JSON.readTree(made.body()).get("token").asText());
            JsonNode snapshot = JSON.readTree(http.send(request(id, "/api/v1/clients/" + id + "/sensors?limit=1", 30),
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
        http.sendAsync(request(id, "/api/v1/clients/" + id + "/feed?limit=1000&wait=" + waitSeconds + "&after=" + after,
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

    private HttpRequest request(String client, String path, int timeoutSeconds) {
        return HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(timeoutSeconds))
                .header("Authorization", "Bearer " + keys.get(client)).GET().build();
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

    @Override
    public void close() {
        closed = true;
    }

    /**
     * The pollers as a process of their own ({@link FeedPollerProcess}): {@code base wait ids-file}, one client id a
     * line. Commands on standard input, one a line, each answered on standard output: {@code start} (keys made,
     * polls open: {@code started}), {@code open} ({@code open N}), {@code stop} (the polls closed, then
     * {@code answers N}, {@code repeats N}, {@code error TEXT} each, {@code item CLIENT EVENT OCCURRED ARRIVED}
     * each, {@code end}). Standard input closed: the process ends, so that it never outlives the harness.
     */
    public static void main(String[] args) throws Exception {
        FeedPollers pollers = new FeedPollers(URI.create(args[0]), java.nio.file.Files.readAllLines(java.nio.file.Path.of(args[2])),
                Integer.parseInt(args[1]));
        java.io.BufferedReader commands = new java.io.BufferedReader(new java.io.InputStreamReader(System.in,
                java.nio.charset.StandardCharsets.UTF_8));
        java.io.PrintStream out = new java.io.PrintStream(new java.io.BufferedOutputStream(System.out, 1 << 16), false,
                java.nio.charset.StandardCharsets.UTF_8);
        for (String command; (command = commands.readLine()) != null; ) {
            switch (command) {
                case "start" -> {
                    pollers.start();
                    out.println("started");
                }
                case "open" -> out.println("open " + pollers.open());
                case "stop" -> {
                    pollers.close();
                    out.println("answers " + pollers.answers());
                    out.println("repeats " + pollers.repeats());
                    pollers.errors().forEach(e -> out.println("error " + e.replace('\n', ' ')));
                    pollers.items.values().forEach(i -> out.println("item " + i.client() + " " + i.eventId() + " "
                            + i.occurredAtMs() + " " + i.arrivedAtMs()));
                    out.println("end");
                }
                default -> out.println("error unknown command " + command);
            }
            out.flush();
        }
        System.exit(0);
    }
}
