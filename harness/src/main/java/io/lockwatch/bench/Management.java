package io.lockwatch.bench;

import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Comparator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The HA topology's RabbitMQ cluster ({@code scripts/lib/ha.sh}: nodes lwha1..3@localhost, AMQP 5681–5683,
 * management 15681–15683) as the node-loss drill sees it: who leads a quorum queue (asked of any node that answers),
 * and the loss of a node, disk and all.
 */
final class Management {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path DATA = Path.of("/var/lib/rabbitmq/ha");

    private Management() {
    }

    /** The node an HA AMQP port belongs to. */
    static String node(int amqpPort) {
        return "lwha" + (amqpPort - 5680) + "@localhost";
    }

    /** The virtual host of an AMQP URI ("/" when none). */
    static String vhost(String amqpUri) {
        String path = URI.create(amqpUri).getRawPath();
        return path == null || path.length() <= 1 ? "/" : URLDecoder.decode(path.substring(1), StandardCharsets.UTF_8);
    }

    /** The node leading the quorum queue now, as the first node that answers tells. */
    static String leader(String vhost, String queue) throws IOException, InterruptedException {
        IOException last = null;
        for (int port = 15681; port <= 15683; port++) {
            try {
                HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                                + "/api/queues/" + encode(vhost) + "/" + encode(queue)))
                        .header("Authorization", "Basic " + Base64.getEncoder().encodeToString("guest:guest".getBytes(StandardCharsets.UTF_8)))
                        .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    JsonNode leader = JSON.readTree(r.body()).get("leader");
                    if (leader != null && !leader.asText().isEmpty()) {
                        return leader.asText();
                    }
                }
                last = new IOException("HTTP " + r.statusCode() + " from the management API on " + port);
            } catch (IOException e) {
                last = e;
            }
        }
        throw new IOException("no node of the cluster tells who leads " + queue, last);
    }

    /** Waits until another node than {@code old} leads the queue (a minute at most); that node. */
    static String awaitLeader(String vhost, String queue, String old) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (true) {
            try {
                String now = leader(vhost, queue);
                if (!now.equals(old)) {
                    return now;
                }
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new IOException(queue + " is still led by " + old + " a minute after its loss");
            }
            Thread.sleep(200); // asking a remote API; nothing to wait on
        }
    }

    /** kill -9 of the node, then its data directory deleted, as a machine whose disk is lost; it stays down. */
    static void loseNode(String node) throws IOException, InterruptedException {
        long pid = Long.parseLong(Files.readString(DATA.resolve(node + ".pid")).trim());
        ProcessHandle process = ProcessHandle.of(pid).orElseThrow(() -> new IOException(node + " is not running"));
        process.destroyForcibly();
        process.onExit().join();
        Path dir = DATA.resolve(node);
        try (var paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
