package io.lockwatch.audit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.Api.Answer;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The audit log over real HTTP: each kind of change recorded once, with who made it (a token, a client's key, nobody)
 * and how it ended; refused attempts too; no secret in it, whatever the request or the answer carried; read back by
 * actor, resource, operation and outcome, a page at a time or as CSV and JSON lines; and never updated.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class AuditTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    static final ObjectMapper JSON = new ObjectMapper();

    @LocalServerPort int port;
    @Autowired JdbcTemplate jdbc;
    @Autowired MeterRegistry meters;
    Api api;
    Instant began;

    @BeforeEach
    void api() {
        api = new Api(port);
        began = Instant.now().minus(1, ChronoUnit.SECONDS);
    }

    @Test
    void eachChangeIsRecordedOnceWithWhoMadeItAndNoSecretOfTheRequestOrTheAnswer() throws Exception {
        List<String> secrets = new ArrayList<>();
        Answer created = api.call("POST", "/clients", Api.ADMIN, Map.of("name", "audited", "url", receiver.url("/audit")));
        assertThat(created.status()).isEqualTo(201);
        String client = created.body().get("id").asText();
        secrets.add(created.body().get("webhook_secret").asText());
        secrets.add(api.call("POST", "/clients/" + client + "/secret", Api.ADMIN, null).body().get("webhook_secret").asText());

        Answer key = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "dispatch", "role", "client-admin"));
        String token = key.body().get("token").asText();
        String keyId = key.body().at("/key/id").asText();
        secrets.add(token);
        assertThat(api.call("PUT", "/clients/" + client, token, Map.of("enabled", false)).status()).isEqualTo(200);

        String sensor = "AUD" + Long.toString(System.nanoTime() % 1_000_000_000L, 36).toUpperCase();
        assertThat(api.call("POST", "/sensors", Api.ADMIN, Map.of("id", sensor, "address", "Audit st. 1")).status()).isEqualTo(201);
        Answer credential = api.call("POST", "/sensors/" + sensor + "/credentials", Api.ADMIN, null);
        assertThat(credential.status()).isEqualTo(201);
        secrets.add(credential.body().get("secret").asText());

        String link = api.call("POST", "/clients/" + client + "/portal-links", Api.ADMIN, Map.of("role", "client-read"))
                .body().get("url").asText();
        String linkSecret = link.substring(link.indexOf("lwp_"));
        secrets.add(linkSecret);
        HttpResponse<String> session = api.send("POST", "/api/v1/portal/sessions", null, "{\"link\":\"" + linkSecret + "\"}");
        assertThat(session.statusCode()).as(session.body()).isEqualTo(201);
        secrets.add(JSON.readTree(session.body()).get("token").asText());

        // a GET is no change
        assertThat(api.call("GET", "/clients/" + client, Api.ADMIN, null).status()).isEqualTo(200);

        List<JsonNode> onClient = entries("resource=clients/" + client);
        assertThat(onClient).extracting(e -> e.get("operation").asText()).containsExactlyInAnyOrder(
                "rotateClientSecret", "createClientKey", "updateClient", "createPortalLink");
        JsonNode update = only(onClient, "updateClient");
        assertThat(update.get("actor").asText()).isEqualTo("client-key-" + keyId);
        assertThat(update.get("actor_kind").asText()).isEqualTo("client-key");
        assertThat(update.get("actor_client").asText()).isEqualTo(client);
        assertThat(update.get("details")).isEqualTo(JSON.readTree("{\"enabled\":false}"));
        assertThat(update.get("status").asInt()).isEqualTo(200);
        assertThat(update.get("outcome").asText()).isEqualTo("succeeded");
        assertThat(update.get("method").asText()).isEqualTo("PUT");
        assertThat(update.get("address").asText()).isNotBlank();
        assertThat(update.get("user_agent").asText()).startsWith("Java-http-client");
        assertThat(update.get("correlation_id").asText()).isNotBlank();
        JsonNode keyMade = only(onClient, "createClientKey");
        assertThat(keyMade.get("actor").asText()).isEqualTo("full-token-1");
        assertThat(keyMade.get("details")).isEqualTo(JSON.readTree("{\"name\":\"dispatch\",\"role\":\"client-admin\"}"));

        JsonNode made = only(entries("operation=createClient&actor=full-token-1"), e -> e.get("details").path("name").asText().equals("audited"));
        assertThat(made.get("resource").asText()).isEqualTo("clients");
        assertThat(made.get("status").asInt()).isEqualTo(201);
        assertThat(made.at("/details/url").asText()).isEqualTo(receiver.url("/audit"));
        assertThat(only(entries("resource=sensors/" + sensor), "createSensorCredential").get("actor").asText())
                .isEqualTo("full-token-1");

        // the portal link is a credential: its body is not kept, only its size
        JsonNode opened = only(entries("operation=openPortalSession"), e -> e.get("at").asText().compareTo(began.toString()) >= 0);
        assertThat(opened.get("actor").asText()).isEqualTo("anonymous");
        assertThat(opened.get("details").has("body_bytes")).isTrue();

        String everything = String.join("\n", jdbc.queryForList("SELECT audit_log::text FROM audit_log", String.class));
        for (String secret : secrets) {
            assertThat(everything).as("no secret in the audit log").doesNotContain(secret)
                    .doesNotContain(secret.substring(secret.length() - 20));
        }
    }

    @Test
    void aRefusedChangeIsRecordedWithWhoTriedAndEveryRefusalCounted() throws Exception {
        double before = meters.counter("lockwatch.audit.refused").count();
        HttpResponse<String> anonymous = api.send("POST", "/api/v1/clients", null, "{\"name\":\"x\",\"url\":\"http://example.com/\"}");
        assertThat(anonymous.statusCode()).isEqualTo(401);
        assertThat(api.call("DELETE", "/sensors/NOPE", Api.READER, null).status()).isEqualTo(403);
        assertThat(api.call("DELETE", "/sensors/NOPE" + System.nanoTime() % 1000, Api.ADMIN, null).status()).isEqualTo(404);

        List<JsonNode> refused = entries("outcome=refused");
        assertThat(refused).anySatisfy(e -> {
            assertThat(e.get("operation").asText()).isEqualTo("createClient");
            assertThat(e.get("actor").asText()).isEqualTo("anonymous");
            assertThat(e.get("actor_kind").asText()).isEqualTo("anonymous");
            assertThat(e.get("status").asInt()).isEqualTo(401);
        });
        assertThat(refused).anySatisfy(e -> {
            assertThat(e.get("operation").asText()).isEqualTo("deleteSensor");
            assertThat(e.get("resource").asText()).isEqualTo("sensors/NOPE");
            assertThat(e.get("actor").asText()).isEqualTo("read-token-1");
            assertThat(e.get("status").asInt()).isEqualTo(403);
        });
        assertThat(entries("outcome=rejected&operation=deleteSensor&actor=full-token-1"))
                .anySatisfy(e -> assertThat(e.get("status").asInt()).isEqualTo(404));
        assertThat(meters.counter("lockwatch.audit.refused").count() - before).isGreaterThanOrEqualTo(2);
    }

    @Test
    void jolokiasExecsAndWritesAreRecordedWithJolokiasOwnAnswerAndItsReadsAreNot() throws Exception {
        String basic = "Basic " + Base64.getEncoder().encodeToString(("admin:" + Api.ADMIN).getBytes(StandardCharsets.UTF_8));
        HttpResponse<String> write = api.send("POST", "/actuator/hawtio/jolokia", basic,
                "[{\"type\":\"read\",\"mbean\":\"java.lang:type=Memory\",\"attribute\":\"Verbose\"},"
                        + "{\"type\":\"write\",\"mbean\":\"java.lang:type=Memory\",\"attribute\":\"Verbose\",\"value\":true}]");
        assertThat(write.statusCode()).isEqualTo(200);
        int jolokiasStatus = JSON.readTree(write.body()).get(1).get("status").asInt();

        List<JsonNode> recorded = entries("resource=mbean/java.lang:type%3DMemory");
        assertThat(recorded).hasSize(1);
        JsonNode entry = recorded.get(0);
        assertThat(entry.get("operation").asText()).isEqualTo("jolokia.write");
        assertThat(entry.get("actor").asText()).isEqualTo("full-token-1");
        assertThat(entry.get("status").asInt()).isEqualTo(jolokiasStatus);
        assertThat(entry.get("details")).isEqualTo(JSON.readTree("{\"attribute\":\"Verbose\"}"));

        // an exec by GET, its path given as Jolokia's p parameter: recorded all the same (refused by Jolokia's policy)
        HttpResponse<String> byParameter = api.send("GET", "/actuator/jolokia/?p=/exec/java.lang:type=Threading/resetPeakThreadCount()",
                basic, null);
        assertThat(byParameter.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(byParameter.body()).get("status").asInt()).as(byParameter.body()).isEqualTo(403);
        assertThat(entries("resource=mbean/java.lang:type%3DThreading")).singleElement().satisfies(e -> {
            assertThat(e.get("operation").asText()).isEqualTo("jolokia.exec");
            assertThat(e.get("status").asInt()).isEqualTo(JSON.readTree(byParameter.body()).get("status").asInt());
        });
    }

    @Test
    void theLogIsReadByPagesAndExportedAsCsvAndJsonLinesByOperatorsOnly() throws Exception {
        for (int i = 0; i < 3; i++) {
            api.call("DELETE", "/sensors/PAGED" + i, Api.ADMIN, null);
        }
        String query = "operation=deleteSensor&resource=sensors/PAGED1&from=" + URLEncoder.encode(began.toString(), StandardCharsets.UTF_8);
        assertThat(entries(query)).hasSize(1);

        // a page at a time, newest first
        String all = "operation=deleteSensor&from=" + URLEncoder.encode(began.toString(), StandardCharsets.UTF_8);
        Answer first = api.call("GET", "/audit?limit=1&" + all, Api.READER, null);
        assertThat(first.body().get("items")).hasSize(1);
        String cursor = first.body().get("next_cursor").asText();
        Answer second = api.call("GET", "/audit?limit=1&cursor=" + cursor + "&" + all, Api.READER, null);
        assertThat(second.body().get("items").get(0).get("at").asText())
                .isLessThanOrEqualTo(first.body().get("items").get(0).get("at").asText());
        assertThat(second.body().get("items").get(0).get("id")).isNotEqualTo(first.body().get("items").get(0).get("id"));

        HttpResponse<String> csv = api.send("GET", "/api/v1/audit?format=csv&" + all, "Bearer " + Api.READER, null);
        assertThat(csv.statusCode()).isEqualTo(200);
        assertThat(csv.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/csv");
        List<String> lines = csv.body().lines().toList();
        assertThat(lines.get(0)).startsWith("at,actor,actor_kind,");
        assertThat(lines).filteredOn(l -> l.contains("sensors/PAGED")).hasSizeGreaterThanOrEqualTo(3);

        HttpResponse<String> jsonl = api.send("GET", "/api/v1/audit?format=jsonl&" + all, "Bearer " + Api.ADMIN, null);
        assertThat(jsonl.headers().firstValue("Content-Type").orElseThrow()).startsWith("application/x-ndjson");
        List<JsonNode> rows = new ArrayList<>();
        for (String line : jsonl.body().lines().toList()) {
            rows.add(JSON.readTree(line));
        }
        assertThat(rows).extracting(r -> r.get("resource").asText()).contains("sensors/PAGED0", "sensors/PAGED1", "sensors/PAGED2");

        // a NUL no entry can hold: a 400 naming the field, not a file cut short after a 200
        HttpResponse<String> nul = api.send("GET", "/api/v1/audit?format=csv&resource=%00", "Bearer " + Api.ADMIN, null);
        assertThat(nul.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(nul.body()).get("field").asText()).isEqualTo("resource");

        // JSON lines of an empty range: nothing to send
        assertThat(api.send("GET", "/api/v1/audit?format=jsonl&actor=nobody-at-all", "Bearer " + Api.ADMIN, null).statusCode())
                .isEqualTo(204);

        // a client's key is not an operator: the log is not its to read
        String client = api.client(receiver, "/audit-reader");
        String key = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "k", "role", "client-admin"))
                .body().get("token").asText();
        assertThat(api.call("GET", "/audit", key, null).status()).isEqualTo(404);
        assertThat(api.send("GET", "/api/v1/audit", null, null).statusCode()).isEqualTo(401);
    }

    @Test
    void theDatabaseItselfRefusesToUpdateAnEntry() throws Exception {
        api.call("DELETE", "/sensors/UPDATEME", Api.ADMIN, null);
        assertThat(entries("resource=sensors/UPDATEME")).isNotEmpty();
        assertThatThrownBy(() -> jdbc.update("UPDATE audit_log SET actor = 'someone else' WHERE resource = 'sensors/UPDATEME'"))
                .hasMessageContaining("append-only");
    }

    private List<JsonNode> entries(String query) throws Exception {
        String q = query.contains("from=") ? query : query + "&from=" + URLEncoder.encode(began.toString(), StandardCharsets.UTF_8);
        Answer page = api.call("GET", "/audit?limit=1000&" + q, Api.READER, null);
        assertThat(page.status()).as(String.valueOf(page.body())).isEqualTo(200);
        List<JsonNode> items = new ArrayList<>();
        page.body().get("items").forEach(items::add);
        return items;
    }

    private static JsonNode only(List<JsonNode> entries, String operation) {
        return only(entries, e -> e.get("operation").asText().equals(operation));
    }

    private static JsonNode only(List<JsonNode> entries, java.util.function.Predicate<JsonNode> which) {
        List<JsonNode> found = entries.stream().filter(which).toList();
        assertThat(found).as("one entry of " + entries).hasSize(1);
        return found.get(0);
    }

}
