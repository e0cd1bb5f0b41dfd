package io.lockwatch.testing;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * What RabbitMQ's management API says of a queue (its type, arguments, members and leader), as guest from loopback:
 * the broker's own account, independent of how the service declared the queue.
 */
public final class RabbitManagement {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private final int port;

    /** The single node's management port (15672) or an HA node's (15681..15683). */
    public RabbitManagement(int port) {
        this.port = port;
    }

    /** The queue's JSON; null if the broker has no such queue. */
    public JsonNode queue(String vhost, String name) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/queues/"
                        + encode(vhost) + "/" + encode(name)))
                .header("Authorization", "Basic " + Base64.getEncoder().encodeToString("guest:guest".getBytes(StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 404) {
            return null;
        }
        if (r.statusCode() != 200) {
            throw new IllegalStateException("management API: HTTP " + r.statusCode() + " for queue " + name);
        }
        return JSON.readTree(r.body());
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
