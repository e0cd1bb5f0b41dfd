package io.lockwatch.notify;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import com.sun.net.httpserver.HttpServer;

/**
 * A real HTTP server on loopback standing in for clients: each path answers as it is told (a status, or hang
 * until released) and records every request with its arrival time.
 */
public class WebhookReceiver implements AutoCloseable, org.junit.jupiter.api.extension.AfterAllCallback {

    public record Received(String path, Map<String, String> headers, String body, long arrivedAt) {
        public String header(String name) {
            return headers.get(name.toLowerCase());
        }
    }

    private final HttpServer server;
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final Map<String, Integer> answers = new ConcurrentHashMap<>();
    private final Map<String, String> retryAfter = new ConcurrentHashMap<>();
    private final CountDownLatch released = new CountDownLatch(1);
    private volatile long delayMillis;
    private final Map<String, Long> delays = new ConcurrentHashMap<>();
    private final Map<String, java.util.concurrent.atomic.AtomicInteger> inFlight = new ConcurrentHashMap<>();
    /** Per path, how many of its requests were being handled as each one arrived, itself included, in arrival order. */
    private final Map<String, List<Integer>> inFlightAtArrival = new ConcurrentHashMap<>();

    public static final int HANG = -1;

    /**
     * A receiver for a whole test class, closed after its tests:
     * {@code @RegisterExtension static final WebhookReceiver receiver = WebhookReceiver.forTheClass();}
     */
    public static WebhookReceiver forTheClass() {
        try {
            return new WebhookReceiver();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public void afterAll(org.junit.jupiter.api.extension.ExtensionContext context) {
        close();
    }

    public WebhookReceiver() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 100);
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", exchange -> {
            boolean[] answered = {false};
            try (InputStream in = exchange.getRequestBody()) {
                String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                Map<String, String> headers = new ConcurrentHashMap<>();
                exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(), String.join(",", v)));
                String path = exchange.getRequestURI().getPath();
                java.util.concurrent.atomic.AtomicInteger handling =
                        inFlight.computeIfAbsent(path, p -> new java.util.concurrent.atomic.AtomicInteger());
                inFlightAtArrival.computeIfAbsent(path, p -> new CopyOnWriteArrayList<>()).add(handling.incrementAndGet());
                // the answer is decided before the request is visible to the test, which may change it next
                int status = answers.getOrDefault(path, 200);
                String after = retryAfter.get(path);
                received.add(new Received(path, headers, body, System.currentTimeMillis()));
                long delay = delays.getOrDefault(path, delayMillis);
                if (delay > 0) {
                    Thread.sleep(delay);
                }
                if (status == HANG) {
                    released.await(60, TimeUnit.SECONDS);
                    status = 200;
                }
                if (after != null) {
                    exchange.getResponseHeaders().add("Retry-After", after);
                }
                // no longer in flight once answered: the next request may come before this handler returns
                handling.decrementAndGet();
                answered[0] = true;
                exchange.sendResponseHeaders(status, -1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                exchange.close();
                java.util.concurrent.atomic.AtomicInteger handling = inFlight.get(exchange.getRequestURI().getPath());
                if (handling != null && !answered[0]) {
                    handling.decrementAndGet();
                }
            }
        });
        server.start();
    }

    public String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    public void answer(String path, int status) {
        answers.put(path, status);
    }

    /** Every answer comes this much later. */
    public void delay(long millis) {
        this.delayMillis = millis;
    }

    /** Every answer on this path comes this much later: an endpoint across the internet, or a slow one. */
    public void delay(String path, long millis) {
        delays.put(path, millis);
    }

    /** For each request on the path, in arrival order: how many of the path's requests were in flight as it arrived. */
    public List<Integer> inFlightAtArrival(String path) {
        return List.copyOf(inFlightAtArrival.getOrDefault(path, List.of()));
    }

    public void answerRetryAfter(String path, int status, String seconds) {
        answers.put(path, status);
        retryAfter.put(path, seconds);
    }

    public List<Received> at(String path) {
        return received.stream().filter(r -> r.path().equals(path)).toList();
    }

    /** Verifies a request the way a Standard Webhooks receiver does. */
    public static boolean signatureValid(Received r, String secret) throws Exception {
        byte[] key = Base64.getDecoder().decode(secret.substring("whsec_".length()));
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        String signed = r.header("webhook-id") + "." + r.header("webhook-timestamp") + "." + r.body();
        String expected = Base64.getEncoder().encodeToString(mac.doFinal(signed.getBytes(StandardCharsets.UTF_8)));
        for (String candidate : r.header("webhook-signature").split(" ")) {
            if (candidate.equals("v1," + expected)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        released.countDown();
        server.stop(0);
    }
}
