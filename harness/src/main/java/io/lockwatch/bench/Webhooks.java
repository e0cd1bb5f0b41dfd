package io.lockwatch.bench;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

/**
 * The benchmark's clients: one HTTP server on loopback answering {@code POST /c/<client index>} with 204, as a
 * client's webhook endpoint would. Each request is checked as a client would check it (the Standard Webhooks
 * signature, with the client's secret, computed here independently of the service's code) and recorded with
 * its arrival time. A body is one event, or a batch (a JSON array of events: {@code --max-events-per-request}); an
 * event's id seen again is a re-delivery and counted, not recorded twice. Each answer may
 * come a set delay after the request arrived, as from an endpoint across the internet; the arrival time is what the
 * latency figures use, as a receiver would stamp it.
 */
final class Webhooks implements AutoCloseable {

    /** The first arrival of one notification; {@code order}: its place among all the requests received. */
    record Arrival(String eventId, int client, String clientId, String sensorId, String type, long sequence,
                   Integer state, long occurredAtMs, long arrivedAtMs, boolean signatureValid, long order) {

        long latencyMs() {
            return arrivedAtMs - occurredAtMs;
        }
    }

    private static final Pattern FIELD = Pattern.compile("\"([a-z_]+)\":(\"((?:[^\"\\\\]|\\\\.)*)\"|-?[0-9]+|null)");

    private final HttpServer server;
    private final ExecutorService threads;
    private final byte[][] keys;
    private final Map<String, Arrival> arrivals = new ConcurrentHashMap<>();
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong redeliveries = new AtomicLong();
    private final AtomicLong malformed = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private volatile int misbehaving = -1;
    private volatile boolean hang;
    private volatile long misbehavingUntil;
    private final long answerDelayMs;

    /**
     * @param secrets the webhook secret ({@code whsec_<base64>}) of each client, by client index
     * @param threads requests handled at once (the service sends up to its lockwatch.notify.max-concurrent)
     * @param answerDelayMs how long after a request arrived it is answered
     */
    Webhooks(List<String> secrets, int threads, long answerDelayMs) throws IOException {
        this.answerDelayMs = answerDelayMs;
        keys = new byte[secrets.size()][];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = Base64.getDecoder().decode(secrets.get(i).substring("whsec_".length()));
        }
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 256);
        this.threads = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "bench-webhook");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(this.threads);
        server.createContext("/c/", this::handle);
        server.start();
    }

    /** A client's secret, learnt once its endpoint's URL was registered (a registry file answers it). */
    void key(int client, String secret) {
        keys[client] = Base64.getDecoder().decode(secret.substring("whsec_".length()));
    }

    /** The URL of a client's endpoint. */
    String url(int client) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/c/" + client;
    }

    /**
     * Until the given time, one client's endpoint hangs (holds each request without an answer until then) or
     * answers 500; what it receives meanwhile is not recorded, as a client that is down would not have it.
     */
    void misbehave(int client, boolean hang, long untilMillis) {
        this.hang = hang;
        this.misbehavingUntil = untilMillis;
        this.misbehaving = client;
    }

    private void handle(HttpExchange http) throws IOException {
        long arrived = System.currentTimeMillis();
        long order = requests.incrementAndGet();
        try (http; InputStream in = http.getRequestBody()) {
            byte[] body = in.readAllBytes();
            if (http.getRequestURI().getPath().equals("/c/" + misbehaving) && arrived < misbehavingUntil) {
                refused.incrementAndGet();
                if (hang) {
                    try {
                        Thread.sleep(misbehavingUntil - arrived);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                http.sendResponseHeaders(500, -1);
                return;
            }
            record(http.getRequestURI(), http.getRequestHeaders().getFirst("webhook-id"),
                    http.getRequestHeaders().getFirst("webhook-timestamp"),
                    http.getRequestHeaders().getFirst("webhook-signature"), body, arrived, order);
            if (answerDelayMs > 0) {
                try {
                    Thread.sleep(Math.max(0, arrived + answerDelayMs - System.currentTimeMillis()));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            http.sendResponseHeaders(204, -1);
        }
    }

    private void record(URI uri, String id, String timestamp, String signature, byte[] body, long arrived, long order) {
        int client;
        try {
            client = Integer.parseInt(uri.getPath().substring("/c/".length()));
        } catch (NumberFormatException e) {
            malformed.incrementAndGet();
            return;
        }
        if (id == null || timestamp == null || signature == null || client < 0 || client >= keys.length) {
            malformed.incrementAndGet();
            return;
        }
        String json = new String(body, StandardCharsets.UTF_8);
        boolean signed = verifies(keys[client], id, timestamp, json, signature);
        // one event, or a batch (a JSON array of them): each is known by its own id, the request's webhook-id
        // being the event's for one
        for (String event : objects(json)) {
            Map<String, String> f = fields(event);
            try {
                String eventId = java.util.Objects.requireNonNull(f.get("id"));
                Arrival a = new Arrival(eventId, client, f.get("client_id"), f.get("sensor_id"), f.get("type"),
                        Long.parseLong(f.get("sequence")), f.get("state") == null ? null : Integer.valueOf(f.get("state")),
                        java.time.Instant.parse(f.get("occurred_at")).toEpochMilli(), arrived, signed, order);
                if (arrivals.putIfAbsent(eventId, a) != null) {
                    redeliveries.incrementAndGet();
                }
            } catch (RuntimeException e) {
                malformed.incrementAndGet();
            }
        }
    }

    /**
     * The top-level objects of a body: itself if it is one, the elements of an array of them otherwise (no JSON
     * library here: braces are counted outside strings).
     */
    static List<String> objects(String json) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        int start = -1;
        boolean inString = false;
        for (int i = 0; i < json.length(); i++) {
            char ch = json.charAt(i);
            if (inString) {
                if (ch == '\\') {
                    i++;
                } else if (ch == '"') {
                    inString = false;
                }
            } else if (ch == '"') {
                inString = true;
            } else if (ch == '{') {
                if (depth++ == 0) {
                    start = i;
                }
            } else if (ch == '}' && depth > 0 && --depth == 0) {
                out.add(json.substring(start, i + 1));
            }
        }
        return out;
    }

    /** The flat fields of a webhook body ({@code null} for a JSON null or a missing field). */
    private static Map<String, String> fields(String json) {
        Map<String, String> out = new java.util.HashMap<>();
        Matcher m = FIELD.matcher(json);
        while (m.find()) {
            String value = m.group(2);
            // the event's own fields come before an alarm's nested ones of the same names (id, type)
            if (!out.containsKey(m.group(1))) {
                out.put(m.group(1), value.equals("null") ? null : m.group(3) != null ? m.group(3) : value);
            }
        }
        return out;
    }

    /** Standard Webhooks: {@code v1,<base64 HMAC-SHA256(key, id.timestamp.body)>}, one of a space-separated list. */
    static boolean verifies(byte[] key, String id, String timestamp, String body, String signatures) {
        byte[] expected;
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            expected = mac.doFinal((id + "." + timestamp + "." + body).getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
        for (String s : signatures.split(" ")) {
            if (s.startsWith("v1,")) {
                try {
                    if (MessageDigest.isEqual(expected, Base64.getDecoder().decode(s.substring(3)))) {
                        return true;
                    }
                } catch (IllegalArgumentException e) {
                    // not base64: not this one
                }
            }
        }
        return false;
    }

    List<Arrival> arrivals() {
        return new ArrayList<>(arrivals.values());
    }

    long distinct() {
        return arrivals.size();
    }

    long requests() {
        return requests.get();
    }

    long redeliveries() {
        return redeliveries.get();
    }

    /** Requests the misbehaving client did not take. */
    long refused() {
        return refused.get();
    }

    long malformed() {
        return malformed.get();
    }

    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
    }
}
