package io.lockwatch.infra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.ServiceProcess;
import org.junit.jupiter.api.Test;

/**
 * An instance for client traffic ({@code lockwatch.pipeline.enabled=false}) beside one with the pipeline, both the
 * packaged service on the real services. The client's API calls, its readings and its long poll all go to the API
 * instance; the readings are applied, and the webhooks posted, by the other; the held poll is woken by the event
 * that other instance recorded. The API instance itself consumed nothing, posted nothing and never became an
 * ingest member.
 */
class ApiOnlyInstanceIT {

    static final String DB = "jdbc:postgresql://127.0.0.1:5432/lockwatch";
    static final String TOKEN = "it-token";
    static final String[] COMMON = {"--lockwatch.notify.allow-private-targets=true", "--lockwatch.notify.poll-interval=200"};

    final HttpClient http = HttpClient.newHttpClient();

    @Test
    void theApiInstanceServesTheClientWhileTheOtherAppliesAndDelivers() throws Exception {
        try (WebhookReceiver receiver = new WebhookReceiver()) {
            ServiceProcess pipeline = ServiceProcess.start("pipeline", COMMON);
            try {
                ServiceProcess apiOnly = ServiceProcess.start("api-only", with(COMMON, "--lockwatch.pipeline.enabled=false"));
                try {
                    drill(receiver, pipeline, apiOnly);
                } finally {
                    apiOnly.stop();
                }
            } finally {
                pipeline.stop();
            }
        }
    }

    private void drill(WebhookReceiver receiver, ServiceProcess pipeline, ServiceProcess apiOnly) throws Exception {
        Api api = new Api(apiOnly.port(), Duration.ofSeconds(40));

        String sensor = "Ao" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        Api.Answer client = api.call("POST", "/clients", TOKEN,
                Map.of("name", "api-only drill", "url", receiver.url("/api-only")));
        assertThat(client.status()).as(String.valueOf(client.body())).isEqualTo(201);
        String id = client.body().get("id").asText();
        assertThat(api.call("POST", "/sensors", TOKEN, Map.of("id", sensor, "address", "api-only drill")).status())
                .isEqualTo(201);
        assertThat(api.call("PUT", "/clients/" + id + "/sensors/" + sensor, TOKEN, null).status()).isLessThan(300);

        // the feed's place before any event: the snapshot's cursor
        Api.Answer snapshot = api.call("GET", "/clients/" + id + "/sensors", TOKEN, null);
        assertThat(snapshot.status()).isEqualTo(200);
        String cursor = snapshot.body().get("feed_cursor").asText();

        // a long poll held by the API instance, then a reading POSTed to it
        CompletableFuture<Api.Answer> held = CompletableFuture.supplyAsync(() -> {
            try {
                return api.call("GET", "/clients/" + id + "/feed?wait=30&after=" + cursor, TOKEN, null);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> counter(apiOnly, "lockwatch_feed_waiting") >= 1);
        assertThat(api.call("POST", "/readings", TOKEN, Map.of("sensor_id", sensor, "data", 0)).status()).isEqualTo(202);

        Api.Answer woken = held.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertThat(woken.status()).isEqualTo(200);
        assertThat(woken.body().get("items")).hasSize(1);
        assertThat(woken.body().at("/items/0/sensor_id").asText()).isEqualTo(sensor);
        assertThat(woken.body().at("/items/0/type").asText()).isEqualTo("sensor.state_changed");
        await().atMost(Duration.ofSeconds(30)).until(() -> receiver.at("/api-only").size() == 1);
        assertThat(receiver.at("/api-only").get(0).header("webhook-id"))
                .isEqualTo(woken.body().at("/items/0/id").asText());

        // the work was the other instance's (its counter is there, at zero: not a series renamed away)
        assertThat(scrape(apiOnly)).contains("lockwatch_readings_received_total");
        assertThat(counter(apiOnly, "lockwatch_readings_received_total")).isZero();
        assertThat(counter(apiOnly, "lockwatch_notifications_total")).isZero();
        assertThat(counter(pipeline, "lockwatch_readings_received_total")).isGreaterThanOrEqualTo(1);
        assertThat(counter(pipeline, "lockwatch_notifications_total")).isGreaterThanOrEqualTo(1);
        assertThat(members()).anyMatch(m -> m.contains("/" + pipeline.pid() + "/"))
                .noneMatch(m -> m.contains("/" + apiOnly.pid() + "/"));
        // it took none of the clustered scans' triggers: its scheduler never started
        assertThat(Files.readString(Path.of("target", "service-api-only.log")))
                .contains("serves the API only").contains("Not starting Quartz scheduler");
    }

    private static String[] with(String[] args, String more) {
        String[] all = java.util.Arrays.copyOf(args, args.length + 1);
        all[args.length] = more;
        return all;
    }

    /** The sum of a series' samples (a counter's or a gauge's) on an instance's Prometheus page (0 when it has none). */
    private double counter(ServiceProcess instance, String series) throws Exception {
        double sum = 0;
        for (String line : scrape(instance).split("\n")) {
            if (line.startsWith(series + "{") || line.startsWith(series + " ")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    private String scrape(ServiceProcess instance) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + instance.port() + "/actuator/prometheus"))
                .header("Authorization", "Bearer " + TOKEN).build(), HttpResponse.BodyHandlers.ofString()).body();
    }

    private static List<String> members() throws Exception {
        try (Connection c = DriverManager.getConnection(DB, "lockwatch", "lockwatch");
             PreparedStatement ps = c.prepareStatement("SELECT instance_id FROM ingest_members")) {
            List<String> ids = new java.util.ArrayList<>();
            try (var rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getString(1));
                }
            }
            return ids;
        }
    }
}
