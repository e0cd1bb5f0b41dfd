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
 * webhooks. Each client reads with a client-read key of its own, on a kept-alive connection of its own.
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
    /** Where the long polls go: the API's port, or the feed listener's. */
    private final URI polls;
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
    private final Map<Integer, Connection> connections = new ConcurrentHashMap<>();
    private volatile boolean closed;

    FeedPollers(URI base, URI polls, List<String> clientIds, int waitSeconds) {
        this.base = base;
        this.polls = polls;
        this.clientIds = clientIds;
        this.waitSeconds = waitSeconds;
        // the keys and snapshots before the polls; the polls hold a connection each, as 1,000 separate clients would
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
            pollFrom(c, snapshot.get("feed_cursor").asText());
        }
    }

    /**
     * The client's long polls, one after another on one kept-alive connection, on a thread of its own: read, take the
     * items, read on from the cursor at once. A thousand threads blocked in a read cost this process no CPU; the JDK's
     * HTTP client spends a selector's wake-ups and a chain of completion stages on every request, CPU the service
     * under test goes without on a shared machine.
     */
    private void pollFrom(int client, String after) {
        Thread t = new Thread(null, () -> {
            String cursor = after;
            while (!closed) {
                cursor = pollOnce(client, cursor);
            }
        }, "feed-poller-" + client, 256 * 1024);
        t.setDaemon(true);
        t.start();
    }

    /** One long poll; the cursor to read on from (the same one after a failure, on a new connection). */
    private String pollOnce(int client, String after) {
        String id = clientIds.get(client);
        Connection connection = connections.get(client);
        open.add(id);
        try {
            if (connection == null) {
                connection = new Connection(polls, (waitSeconds + 30) * 1000);
                connections.put(client, connection);
            }
            byte[] body = connection.get("/api/v1/clients/" + id + "/feed?limit=1000&wait=" + waitSeconds + "&after="
                    + after, keys.get(id));
            long arrived = System.currentTimeMillis();
            open.remove(id);
            answers.incrementAndGet();
            JsonNode page = JSON.readTree(body);
            for (JsonNode item : page.get("items")) {
                long event = item.get("event_id").asLong();
                Item seen = new Item(client, event, Instant.parse(item.get("occurred_at").asText()).toEpochMilli(), arrived);
                if (items.putIfAbsent(client + "/" + event, seen) != null) {
                    repeats.incrementAndGet();
                }
            }
            return page.get("next_cursor").asText();
        } catch (Exception e) {
            open.remove(id);
            connections.remove(client);
            if (connection != null) {
                connection.close();
            }
            if (!closed) {
                errors.add(e.toString());
                try {
                    Thread.sleep(100); // not a loop of failures at full speed against a service that is away
                } catch (InterruptedException stop) {
                    Thread.currentThread().interrupt();
                    closed = true;
                }
            }
            return after;
        }
    }

    /** A kept-alive HTTP/1.1 connection of one client: a GET, its status, and its body (by length or chunked). */
    private static final class Connection {
        private final java.net.Socket socket;
        private final java.io.InputStream in;
        private final java.io.OutputStream out;
        private final String host;

        Connection(URI base, int readTimeoutMs) throws java.io.IOException {
            socket = new java.net.Socket();
            socket.connect(new java.net.InetSocketAddress(base.getHost(), base.getPort()), 5_000);
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(readTimeoutMs);
            in = new java.io.BufferedInputStream(socket.getInputStream(), 16 * 1024);
            out = new java.io.BufferedOutputStream(socket.getOutputStream(), 1024);
            host = base.getHost() + ":" + base.getPort();
        }

        byte[] get(String path, String key) throws java.io.IOException {
            out.write(("GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nAuthorization: Bearer " + key
                    + "\r\nAccept: application/json\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            out.flush();
            String status = line();
            if (!status.startsWith("HTTP/1.1 200 ")) {
                throw new java.io.IOException(status.isEmpty() ? "connection closed" : status);
            }
            int length = -1;
            boolean chunked = false;
            for (String header; !(header = line()).isEmpty(); ) {
                int colon = header.indexOf(':');
                String name = header.substring(0, Math.max(colon, 0)).trim();
                String value = header.substring(colon + 1).trim();
                if (name.equalsIgnoreCase("Content-Length")) {
                    length = Integer.parseInt(value);
                } else if (name.equalsIgnoreCase("Transfer-Encoding") && value.equalsIgnoreCase("chunked")) {
                    chunked = true;
                }
            }
            if (!chunked) {
                if (length < 0) {
                    throw new java.io.IOException("an answer with neither a length nor chunks");
                }
                return in.readNBytes(length);
            }
            java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
            for (int size; (size = Integer.parseInt(line().split(";", 2)[0].trim(), 16)) > 0; ) {
                body.write(in.readNBytes(size));
                line();
            }
            while (!line().isEmpty()) {
                // trailers
            }
            return body.toByteArray();
        }

        private String line() throws java.io.IOException {
            StringBuilder line = new StringBuilder(64);
            for (int b; (b = in.read()) != '\n'; ) {
                if (b < 0) {
                    if (line.length() == 0) {
                        return "";
                    }
                    throw new java.io.EOFException("connection closed mid-line");
                }
                if (b != '\r') {
                    line.append((char) b);
                }
            }
            return line.toString();
        }

        void close() {
            try {
                socket.close();
            } catch (java.io.IOException e) {
                // closing anyway
            }
        }
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
        connections.values().forEach(Connection::close); // a poll held at the service ends now, not in 30 s
    }

    /**
     * The pollers as a process of their own ({@link FeedPollerProcess}): {@code base wait ids-file polls}, one client
     * id a line. Commands on standard input, one a line, each answered on standard output: {@code start} (keys made,
     * polls open: {@code started}), {@code open} ({@code open N}), {@code stop} (the polls closed, then
     * {@code answers N}, {@code repeats N}, {@code error TEXT} each, {@code item CLIENT EVENT OCCURRED ARRIVED}
     * each, {@code end}). Standard input closed: the process ends, so that it never outlives the harness.
     */
    public static void main(String[] args) throws Exception {
        FeedPollers pollers = new FeedPollers(URI.create(args[0]), URI.create(args[3]),
                java.nio.file.Files.readAllLines(java.nio.file.Path.of(args[2])), Integer.parseInt(args[1]));
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
