package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * A registry file larger than is applied before the answer: accepted with a 202 naming the import, its new clients'
 * secrets in that answer, then applied by a job that the import resource follows. The limits here are small so that
 * a few rows are "large".
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "lockwatch.api.import-at-once-max-rows=3", "lockwatch.api.max-import-rows=20",
        "lockwatch.api.max-import-credentials=6"})
class RegistryImportJobTest {

    // the tokens, the file's header, the JSON mapper and the client of the registry file's own test
    static final String ADMIN = RegistryFileApiTest.ADMIN, READER = RegistryFileApiTest.READER;
    static final String HEADER = RegistryFileApiTest.HEADER;
    static final ObjectMapper JSON = RegistryFileApiTest.JSON;
    static final HttpClient HTTP = RegistryFileApiTest.HTTP;

    @LocalServerPort int port;
    @Autowired JdbcTemplate jdbc;

    @Test
    void aLargeFileIsAcceptedThenAppliedByAJobThatItsImportFollows() throws Exception {
        String p = prefix();
        String file = HEADER + "\n" + IntStream.range(0, 10)
                .mapToObj(i -> p + i + ",Door " + i + ",,,Big " + p + ",http://127.0.0.1:9/big").collect(Collectors.joining("\n"));

        HttpResponse<String> accepted = post(file, "text/csv", ADMIN);

        assertThat(accepted.statusCode()).as(accepted.body()).isEqualTo(202);
        JsonNode job = JSON.readTree(accepted.body());
        String id = job.get("id").asText();
        assertThat(accepted.headers().firstValue("Location")).hasValue("/api/v1/imports/" + id);
        assertThat(job.get("rows").asInt()).isEqualTo(10);
        assertThat(job.get("new_clients").findValuesAsText("webhook_secret")).singleElement()
                .satisfies(s -> assertThat(s).startsWith("whsec_"));
        JsonNode done = awaitFinished(id);
        assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("done");
        assertThat(done.at("/outcome/sensors/created").asInt()).isEqualTo(10);
        assertThat(done.at("/outcome/links/added").asInt()).isEqualTo(10);
        assertThat(done.at("/outcome/clients/created").asInt()).as("created on acceptance, counted in the outcome").isEqualTo(1);
        assertThat(done.has("new_clients")).as("secrets are shown once, in the 202").isFalse();
        assertThat(done.get("finished_at").asText()).isNotBlank();
        assertThat(jdbc.queryForObject("SELECT count(*) FROM client_sensors cs JOIN clients c ON c.id = cs.client_id "
                + "WHERE c.name = ?", Integer.class, "Big " + p)).isEqualTo(10);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM registry_import_rows WHERE import_id = ?::uuid", Integer.class, id))
                .as("its staged rows are gone").isZero();

        JsonNode again = awaitFinished(JSON.readTree(post(file, "text/csv", ADMIN).body()).get("id").asText());
        assertThat(again.at("/outcome/sensors/unchanged").asInt()).isEqualTo(10);
        assertThat(again.at("/outcome/links/added").asInt() + again.at("/outcome/clients/created").asInt()).isZero();

        HttpResponse<String> listed = get("/imports", READER);
        assertThat(listed.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(listed.body()).findValuesAsText("id")).contains(id);
    }

    /**
     * A large file's credentials: their secrets in the 202 (hashed and staged, never stored in clear), stored by the
     * job with the sensors they are for. A file asking for more than an import makes is a 413 that changes nothing.
     */
    @Test
    void aLargeFilesCredentialsAreAnsweredWithItsAcceptanceAndStoredByItsJob() throws Exception {
        String p = prefix();
        String file = HEADER + ",gateways,credential\n" + IntStream.range(0, 5)
                .mapToObj(i -> p + i + ",Door " + i + ",,,,,Gw" + p + "," + (i < 4 ? "live" : ""))
                .collect(Collectors.joining("\n"));

        HttpResponse<String> accepted = post(file, "text/csv", ADMIN);

        assertThat(accepted.statusCode()).as(accepted.body()).isEqualTo(202);
        JsonNode answer = JSON.readTree(accepted.body());
        assertThat(answer.get("new_credentials")).hasSize(4);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM registry_import_credentials WHERE secret_hash LIKE 'lwd_%'",
                Integer.class)).as("hashes staged, never secrets").isZero();
        JsonNode done = awaitFinished(answer.get("id").asText());
        assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("done");
        assertThat(done.at("/outcome/credentials/created").asInt()).isEqualTo(4);
        assertThat(done.at("/outcome/gateways/created").asInt()).isEqualTo(1);
        assertThat(done.at("/outcome/gateways/sensors_added").asInt()).isEqualTo(5);
        assertThat(done.has("new_credentials")).as("secrets are shown once, in the 202").isFalse();
        for (JsonNode c : answer.get("new_credentials")) {
            assertThat(devices.authenticate(c.get("login").asText(), c.get("secret").asText())).as(c.toString()).isTrue();
        }
        assertThat(jdbc.queryForObject("SELECT count(*) FROM registry_import_credentials WHERE import_id = ?::uuid",
                Integer.class, answer.get("id").asText())).as("its staged hashes are gone").isZero();

        String tooMany = HEADER + ",credential\n" + IntStream.range(0, 7).mapToObj(i -> p + "M" + i + ",Door,,,,,live")
                .collect(Collectors.joining("\n"));
        HttpResponse<String> refused = post(tooMany, "text/csv", ADMIN);
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(413);
        assertThat(JSON.readTree(refused.body()).get("detail").asText()).contains("7 new credentials").contains("6");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensors WHERE id LIKE ?", Integer.class, p + "M%")).isZero();
    }

    @Autowired io.lockwatch.devices.Devices devices;

    /**
     * One import is applied at a time. While another holds the turn (here the test's own session holds the lock),
     * a small file is answered 409 at once, and a large one's job waits, then is applied.
     */
    @Test
    void whileAnotherImportIsAppliedASmallFileIsA409AndALargeOneWaitsItsTurn() throws Exception {
        String p = prefix();
        String large = HEADER + "\n" + IntStream.range(0, 5).mapToObj(i -> p + i + ",Door " + i + ",,,,")
                .collect(Collectors.joining("\n"));
        String id;
        try (java.sql.Connection other = jdbc.getDataSource().getConnection();
             java.sql.Statement st = other.createStatement()) {
            st.execute("SELECT pg_advisory_lock(hashtext('lockwatch.registry.import'))");

            HttpResponse<String> small = post(HEADER + "\n" + p + "S,Small door,,,,\n", "text/csv", ADMIN);
            assertThat(small.statusCode()).as(small.body()).isEqualTo(409);
            HttpResponse<String> accepted = post(large, "text/csv", ADMIN);
            assertThat(accepted.statusCode()).isEqualTo(202);
            id = JSON.readTree(accepted.body()).get("id").asText();
            // the job is at the lock, waiting for it
            await().atMost(Duration.ofSeconds(10)).until(() -> jdbc.queryForObject(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted", Integer.class) == 1);
            assertThat(jdbc.queryForObject("SELECT state FROM registry_imports WHERE id = ?::uuid", String.class, id))
                    .isEqualTo("applying");
            assertThat(jdbc.queryForObject("SELECT count(*) FROM sensors WHERE id LIKE ?", Integer.class, p + "%")).isZero();

            st.execute("SELECT pg_advisory_unlock(hashtext('lockwatch.registry.import'))");
        }
        JsonNode done = awaitFinished(id);
        assertThat(done.get("state").asText()).as(done.toString()).isEqualTo("done");
        assertThat(done.at("/outcome/sensors/created").asInt()).isEqualTo(5);
    }

    @Test
    void aLargeFileWithABadRowIsRefusedAtOnceAndChangesNothing() throws Exception {
        String p = prefix();
        String file = HEADER + "\n" + IntStream.range(0, 8).mapToObj(i -> p + i + ",Door " + i + ",,,,")
                .collect(Collectors.joining("\n")) + "\n" + p + "0,Another door,,,,\n";

        HttpResponse<String> refused = post(file, "text/csv", ADMIN);

        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(refused.body()).get("errors").get(0).asText())
                .isEqualTo("row 9: sensor " + p + "0 has another address than on row 1");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensors WHERE id LIKE ?", Integer.class, p + "%")).isZero();
        assertThat(jdbc.queryForObject("SELECT state FROM registry_imports ORDER BY created_at DESC LIMIT 1", String.class))
                .isEqualTo("refused");
    }

    @Test
    void aFileOfMoreRowsThanAnImportTakesIsA413() throws Exception {
        String p = prefix();
        String rows = JSON.writeValueAsString(IntStream.range(0, 21)
                .mapToObj(i -> java.util.Map.of("sensor_id", p + i, "address", "Door")).toList());

        HttpResponse<String> refused = post(rows, "application/json", ADMIN);

        assertThat(refused.statusCode()).isEqualTo(413);
        assertThat(JSON.readTree(refused.body()).get("detail").asText()).contains("more than 20 rows")
                .contains("lockwatch.api.max-import-rows");
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensors WHERE id LIKE ?", Integer.class, p + "%")).isZero();
    }

    @Test
    void aFileThatIsNotUtf8IsA400NamingWhere() throws Exception {
        byte[] latin1 = (HEADER + "\n" + prefix() + ",Caf\u00e9,,,,\n").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/import"))
                .header("Authorization", "Bearer " + ADMIN).header("Content-Type", "text/csv")
                .POST(HttpRequest.BodyPublishers.ofByteArray(latin1)).build();

        HttpResponse<String> refused = HTTP.send(request, HttpResponse.BodyHandlers.ofString());

        assertThat(refused.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(refused.body()).get("detail").asText()).contains("not UTF-8").contains("row 1");
    }

    @Test
    void theExportIsStreamedPageAfterPageAndHoldsEverySensorOnceInOrder() throws Exception {
        String p = prefix();
        // more sensors than a page of the export (5,000), some linked to two clients
        jdbc.update("INSERT INTO sensors (id, address) SELECT ? || lpad(i::text, 6, '0'), 'Door ' || i "
                + "FROM generate_series(1, 12000) i", p);
        UUID a = jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES (?, 'http://127.0.0.1:9/a', "
                + "'whsec_AAAA') RETURNING id", UUID.class, "A " + p);
        UUID b = jdbc.queryForObject("INSERT INTO clients (name, url, webhook_secret) VALUES (?, 'http://127.0.0.1:9/b', "
                + "'whsec_AAAA') RETURNING id", UUID.class, "B " + p);
        jdbc.update("INSERT INTO client_sensors SELECT ?, id FROM sensors WHERE id LIKE ?", a, p + "%");
        jdbc.update("INSERT INTO client_sensors SELECT ?, id FROM sensors WHERE id LIKE ? AND right(id, 1) = '7'", b, p + "%");
        try {
            HttpResponse<String> csv = get("/export?format=csv", READER);
            HttpResponse<String> json = get("/export?format=json", READER);

            assertThat(csv.statusCode()).isEqualTo(200);
            assertThat(csv.headers().firstValue("Content-Length")).as("streamed, not sized in advance").isEmpty();
            java.util.List<String> ours = java.util.Arrays.stream(csv.body().split("\r?\n")).filter(l -> l.startsWith(p)).toList();
            assertThat(ours).hasSize(12000 + 1200);
            assertThat(ours).isSortedAccordingTo(java.util.Comparator.comparing((String l) -> l.substring(0, l.indexOf(','))));
            assertThat(ours.stream().filter(l -> l.endsWith(",B " + p + ",http://127.0.0.1:9/b,,,,")).count()).isEqualTo(1200);
            assertThat(csv.body().split("\r?\n")[0]).isEqualTo(RegistryFileApiTest.EXPORT_HEADER);
            JsonNode rows = JSON.readTree(json.body());
            assertThat(rows.isArray()).isTrue();
            assertThat(java.util.stream.StreamSupport.stream(rows.spliterator(), false)
                    .filter(r -> r.get("sensor_id").asText().startsWith(p)).count()).isEqualTo(13200);
        } finally {
            jdbc.update("DELETE FROM sensors WHERE id LIKE ?", p + "%");
            jdbc.update("DELETE FROM clients WHERE id IN (?, ?)", a, b);
        }
    }

    @Autowired org.apache.camel.CamelContext camel;

    /**
     * A registry file reaches the route as Camel's stream cache, which holds it in the heap unless it spools: at
     * 300 MB, with a 512 MB heap, that was an out-of-memory (the setting had been given under a name Camel does not
     * read). Bodies over the API's own limit spool to disk.
     */
    @Test
    void bodiesOverTheApiLimitAreCachedOnDiskNotInTheHeap() {
        assertThat(camel.getStreamCachingStrategy().isEnabled()).isTrue();
        assertThat(camel.getStreamCachingStrategy().isSpoolEnabled()).isTrue();
        assertThat(camel.getStreamCachingStrategy().getSpoolThreshold()).isEqualTo(1024 * 1024 + 1);
    }

    @Test
    void anImportWhoseInstanceStoppedIsReportedFailed() throws Exception {
        UUID id = UUID.randomUUID();
        jdbc.update("""
                INSERT INTO registry_imports (id, state, rows, step, heartbeat_at)
                VALUES (?, 'applying', 5, 'creating the new sensors', now() - interval '5 minutes')""", id);

        JsonNode job = JSON.readTree(get("/imports/" + id, READER).body());

        assertThat(job.get("state").asText()).isEqualTo("failed");
        assertThat(job.get("error").asText()).contains("stopped before it finished").contains("nothing of it was applied");
        assertThat(get("/imports/" + UUID.randomUUID(), READER).statusCode()).isEqualTo(404);
    }

    private JsonNode awaitFinished(String id) throws Exception {
        JsonNode[] last = new JsonNode[1];
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            last[0] = JSON.readTree(get("/imports/" + id, READER).body());
            return last[0].has("finished_at");
        });
        return last[0];
    }

    private static String prefix() {
        return "J" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
    }

    private HttpResponse<String> post(String body, String type, String token) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/import"))
                .header("Authorization", "Bearer " + token).header("Content-Type", type)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path, String token) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1" + path))
                .header("Authorization", "Bearer " + token).GET().build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }
}
