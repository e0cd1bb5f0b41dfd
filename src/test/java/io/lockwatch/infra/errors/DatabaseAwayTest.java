package io.lockwatch.infra.errors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import io.lockwatch.testing.Api;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;

/**
 * With the embedded PostgreSQL stopped, the API and health answer 503 at once, not after the pool's connection
 * timeout (issue 54: 5 s each); started again, they answer as before. The pool's timeout is set far beyond the
 * answers' bound here (60 s against 20), so an answer that waits for the pool cannot come within the bound.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "spring.datasource.hikari.connection-timeout=60000")
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class DatabaseAwayTest {

    static final HttpClient HTTP = HttpClient.newHttpClient();

    @LocalServerPort int port;
    @Autowired JdbcTemplate jdbc;
    @Autowired DataSource dataSource;

    @Test
    void aStoppedDatabaseIsA503AtOnceAndItsReturnIsSeen() throws Exception {
        String sensor = "Aw" + java.util.UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        Api api = new Api(port);
        assertThat(api.call("POST", "/sensors", Api.ADMIN, java.util.Map.of("id", sensor, "address", "door")).status())
                .isEqualTo(201);
        // a client's key never used yet: its first use must ask the database
        String client = api.call("POST", "/clients", Api.ADMIN, java.util.Map.of("name", "away", "url", "http://127.0.0.1:9/away"))
                .body().get("id").asText();
        String key = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, java.util.Map.of("name", "k", "role", "client-read"))
                .body().get("token").asText();
        String dataDirectory = jdbc.queryForObject("SHOW data_directory", String.class);
        long postmaster = Long.parseLong(Files.readAllLines(Path.of(dataDirectory, "postmaster.pid")).get(0).trim());
        ProcessHandle.Info how = ProcessHandle.of(postmaster).orElseThrow().info();
        List<String> again = new ArrayList<>();
        if ("root".equals(System.getProperty("user.name"))) {
            again.addAll(List.of("unshare", "-U")); // as zonky runs it for root: PostgreSQL refuses to run as root
        }
        again.add(how.command().orElseThrow());
        again.addAll(List.of(how.arguments().orElseThrow()));
        DatabaseAway away = dataSource.unwrap(DatabaseAway.class);

        // a fast shutdown: every session ended, no new one taken
        assertThat(new ProcessBuilder("kill", "-INT", String.valueOf(postmaster)).start().waitFor()).isZero();
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> ProcessHandle.of(postmaster).map(p -> !p.isAlive()).orElse(true));
            // the service's own flows (the feed's watch, every 100 ms) find it away first
            await().atMost(Duration.ofSeconds(20)).until(away::known);

            // each answered within the bound, which the pool's timeout (60 s) is far beyond
            CompletableFuture<HttpResponse<String>> read = get("/api/v1/sensors/" + sensor);
            CompletableFuture<HttpResponse<String>> health = get("/actuator/health");
            assertThat(read.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(503);
            assertThat(read.get().headers().firstValue("Retry-After")).hasValue("5");
            assertThat(health.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(503);
            // a key that cannot be checked now is not the caller's fault, nor a 500
            HttpResponse<String> unchecked = HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/v1/me"))
                    .header("Authorization", "Bearer " + key).timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(unchecked.statusCode()).as(unchecked.body()).isEqualTo(503);
            assertThat(unchecked.headers().firstValue("Retry-After")).hasValue("5");
        } finally {
            new ProcessBuilder(again).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(Path.of(dataDirectory).getParent().resolve("postgres.log").toFile()))
                    .start();
        }
        // back: seen by the pool, and answered as before
        await().atMost(Duration.ofSeconds(60)).until(() -> !away.known());
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                assertThat(api.call("GET", "/sensors/" + sensor, Api.READER, null).status()).isEqualTo(200));
    }

    private CompletableFuture<HttpResponse<String>> get(String path) {
        return HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .header("Authorization", "Bearer " + Api.ADMIN).timeout(Duration.ofSeconds(90)).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
