package io.lockwatch.selfservice;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.Api.Answer;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A client's keys over the API: made with the token shown once, kept as a hash, listed without it; a client's admin
 * key acting on its own client (and making a read key); revoked and expired keys refused at once; every access
 * logged with the key and its client.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@ExtendWith(OutputCaptureExtension.class)
class ClientKeysTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @LocalServerPort int port;
    @org.springframework.beans.factory.annotation.Autowired org.springframework.jdbc.core.JdbcTemplate jdbc;
    Api api;
    String client;

    @BeforeEach
    void client() throws Exception {
        api = new Api(port);
        client = api.client(receiver, "/keys");
    }

    @Test
    void aKeyIsShownOnceKeptAsAHashAndActsOnItsOwnClient(CapturedOutput log) throws Exception {
        Answer made = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN,
                Map.of("name", "dispatch", "role", "client-admin"));
        assertThat(made.status()).as(String.valueOf(made.body())).isEqualTo(201);
        String admin = made.body().get("token").asText();
        String keyId = made.body().at("/key/id").asText();
        assertThat(admin).startsWith("lwc_" + keyId.replace("-", "") + "_");
        assertThat(made.body().at("/key/state").asText()).isEqualTo("active");
        assertThat(made.body().at("/key/created_by").asText()).isEqualTo("full-token-1");
        assertThat(jdbc.queryForObject("SELECT secret_hash FROM client_keys WHERE id = ?::uuid", String.class, keyId))
                .as("a hash, not the secret").hasSize(64).doesNotContain(admin.substring(admin.lastIndexOf('_') + 1));
        JsonNode listed = api.call("GET", "/clients/" + client + "/keys", Api.READER, null).body();
        assertThat(listed.get("items")).hasSize(1);
        assertThat(listed.toString()).doesNotContain(admin.substring(admin.lastIndexOf('_') + 1));

        // the client acts on itself: pauses, resumes, and may not rename itself
        assertThat(api.call("GET", "/clients/" + client, admin, null).body().get("name").asText()).isEqualTo("test client");
        assertThat(api.call("PUT", "/clients/" + client, admin, Map.of("enabled", false)).body().get("enabled").asBoolean())
                .isFalse();
        assertThat(api.call("PUT", "/clients/" + client, admin, Map.of("enabled", true)).body().get("enabled").asBoolean())
                .isTrue();
        Answer rename = api.call("PUT", "/clients/" + client, admin, Map.of("name", "mine now"));
        assertThat(rename.status()).isEqualTo(403);
        assertThat(rename.body().get("detail").asText()).contains("not its name");

        // and makes a read key, which reads but does not write
        Answer readMade = api.call("POST", "/clients/" + client + "/keys", admin, Map.of("name", "wall screen", "role", "client-read"));
        assertThat(readMade.status()).isEqualTo(201);
        assertThat(readMade.body().at("/key/created_by").asText()).isEqualTo("client-key-" + keyId);
        String reader = readMade.body().get("token").asText();
        assertThat(api.call("GET", "/clients/" + client + "/stats", reader, null).status()).isEqualTo(200);
        assertThat(api.call("PUT", "/clients/" + client, reader, Map.of("enabled", false)).status()).isEqualTo(403);

        assertThat(log.getOut()).contains("Client key " + keyId + " of client " + client + ": getClient");
        assertThat(log.getOut()).as("never the token").doesNotContain(admin).doesNotContain(reader);
        assertThat(jdbc.queryForObject("SELECT last_used_at IS NOT NULL FROM client_keys WHERE id = ?::uuid", Boolean.class,
                keyId)).isTrue();
    }

    @Test
    void aRevokedOrExpiredKeyIsRefusedAtOnce() throws Exception {
        String admin = key("client-admin");
        Answer readMade = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "r", "role", "client-read"));
        String reader = readMade.body().get("token").asText(), readerId = readMade.body().at("/key/id").asText();
        assertThat(api.call("GET", "/clients/" + client, reader, null).status()).isEqualTo(200);

        assertThat(api.call("DELETE", "/clients/" + client + "/keys/" + readerId, admin, null).status()).isEqualTo(204);
        assertThat(api.call("GET", "/clients/" + client, reader, null).status()).isEqualTo(401);
        assertThat(api.call("GET", "/clients/" + client + "/keys", admin, null).body().findValuesAsText("state"))
                .contains("revoked");

        Answer expiring = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "e", "role", "client-read",
                "expires_at", Instant.now().plusSeconds(3600).toString()));
        String soon = expiring.body().get("token").asText();
        assertThat(api.call("GET", "/clients/" + client, soon, null).status()).isEqualTo(200);
        Answer expired = api.call("PATCH", "/clients/" + client + "/keys/" + expiring.body().at("/key/id").asText(),
                Api.ADMIN, Map.of("expires_at", Instant.now().minusSeconds(1).toString()));
        assertThat(expired.body().get("state").asText()).isEqualTo("expired");
        assertThat(api.call("GET", "/clients/" + client, soon, null).status()).isEqualTo(401);

        assertThat(api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "past", "role", "client-read",
                "expires_at", Instant.now().minusSeconds(60).toString())).body().get("field").asText()).isEqualTo("expires_at");
        // the key's id with another secret, and a token only shaped like one
        assertThat(api.call("GET", "/clients/" + client, admin.substring(0, admin.length() - 4) + "AAAA", null).status())
                .isEqualTo(401);
        assertThat(api.call("GET", "/clients/" + client, "lwc_nothing", null).status()).isEqualTo(401);
    }

    /**
     * A key proven lately is taken without asking the database (a pulling client presents it on every poll). Changed
     * in the database by another instance (revoked, expired, deleted with its client), it is forgotten at the next
     * look at the changed keys, and refused. An instance of its own here, with no looks but the test's.
     */
    @Test
    void aProvenKeyIsTakenUntilALookFindsItChanged() throws Exception {
        ClientKeys keys = new ClientKeys(jdbc, java.time.Duration.ofMinutes(10));
        keys.forgetChanged(); // a first look, as the route's at start
        String other = api.client(receiver, "/keys-other");
        ClientKeys.NewKey revoked = keys.create(java.util.UUID.fromString(client), "r", ClientKeys.READ, null, "test");
        ClientKeys.NewKey expired = keys.create(java.util.UUID.fromString(client), "e", ClientKeys.READ, null, "test");
        ClientKeys.NewKey deleted = keys.create(java.util.UUID.fromString(other), "d", ClientKeys.ADMIN, null, "test");
        for (ClientKeys.NewKey k : java.util.List.of(revoked, expired, deleted)) {
            assertThat(keys.authenticate(k.token())).isNotNull();
        }

        // as another instance would, or an operator's SQL
        jdbc.update("UPDATE client_keys SET revoked_at = now() WHERE id = ?", revoked.key().id());
        jdbc.update("UPDATE client_keys SET expires_at = now() - interval '1 second' WHERE id = ?", expired.key().id());
        jdbc.update("DELETE FROM clients WHERE id = ?::uuid", other);
        for (ClientKeys.NewKey k : java.util.List.of(revoked, expired, deleted)) {
            assertThat(keys.authenticate(k.token())).as("proven lately, not asked again").isNotNull();
        }
        keys.forgetChanged();
        for (ClientKeys.NewKey k : java.util.List.of(revoked, expired, deleted)) {
            assertThat(keys.authenticate(k.token())).as(k.key().name()).isNull();
        }
        // a wrong secret for a proven key's id is refused, and does not unseat the key's own
        ClientKeys.NewKey live = keys.create(java.util.UUID.fromString(client), "l", ClientKeys.READ, null, "test");
        assertThat(keys.authenticate(live.token())).isNotNull();
        assertThat(keys.authenticate(live.token().substring(0, live.token().length() - 4) + "AAAA")).isNull();
        assertThat(keys.authenticate(live.token())).isNotNull();
    }

    /** A token's 32 hex digits are its key's id, whatever the id's bits (the high ones set too). */
    @Test
    void aTokensHexDigitsAreItsKeysId() {
        for (java.util.UUID id : java.util.List.of(java.util.UUID.randomUUID(), java.util.UUID.fromString("ffffffff-ffff-4fff-bfff-ffffffffffff"),
                java.util.UUID.fromString("00000000-0000-4000-8000-000000000001"))) {
            assertThat(ClientKeys.uuid(id.toString().replace("-", ""))).isEqualTo(id);
        }
    }

    /** The service's own look: a key revoked in the database behind its back is refused within a few looks. */
    @Test
    void aKeyRevokedByAnotherInstanceIsRefusedAfterTheServicesNextLook() throws Exception {
        Answer made = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "r", "role", "client-read"));
        String reader = made.body().get("token").asText(), readerId = made.body().at("/key/id").asText();
        assertThat(api.call("GET", "/clients/" + client, reader, null).status()).isEqualTo(200);

        jdbc.update("UPDATE client_keys SET revoked_at = now() WHERE id = ?::uuid", readerId);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).pollInterval(java.time.Duration.ofMillis(200))
                .until(() -> api.call("GET", "/clients/" + client, reader, null).status() == 401);
        assertThat(api.call("GET", "/clients/" + client, reader, null).status()).as("not proven again").isEqualTo(401);
    }

    @Test
    void aClientHoldsAtMostFiftyLiveKeys() throws Exception {
        for (int i = 0; i < 50; i++) {
            key("client-read");
        }
        Answer more = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "51st", "role", "client-read"));
        assertThat(more.status()).isEqualTo(409);
        assertThat(api.call("POST", "/clients/no-such/keys", Api.ADMIN, Map.of("name", "x", "role", "client-read")).status())
                .isEqualTo(400);
    }

    /**
     * A client's own key cannot lift what an operator set: it may bring a key's expiry forward only (an expired key
     * stays expired, one that expires never comes to never); the operator's token may set any. Each refusal is a 403
     * naming expires_at, and changes nothing.
     */
    @Test
    void aClientsKeyBringsExpiriesForwardOnly() throws Exception {
        String admin = key("client-admin");
        Answer made = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "e", "role", "client-read",
                "expires_at", Instant.now().plusSeconds(3600).toString()));
        String expiredToken = made.body().get("token").asText(), expired = made.body().at("/key/id").asText();
        assertThat(api.call("PATCH", keyPath(expired), Api.ADMIN, Map.of("expires_at", Instant.now().minusSeconds(1).toString()))
                .body().get("state").asText()).isEqualTo("expired");

        for (Object lift : new Object[] {null, Instant.now().plusSeconds(86_400).toString()}) {
            Answer refused = api.call("PATCH", keyPath(expired), admin, java.util.Collections.singletonMap("expires_at", lift));
            assertThat(refused.status()).as(lift + ": " + refused.body()).isEqualTo(403);
            assertThat(refused.body().get("field").asText()).isEqualTo("expires_at");
        }
        assertThat(api.call("GET", "/clients/" + client, expiredToken, null).status()).as("still expired").isEqualTo(401);
        assertThat(api.call("GET", "/clients/" + client + "/keys", Api.READER, null).body().findValues("id").stream()
                .filter(id -> id.asText().equals(expired)).count()).isEqualTo(1);

        // a key that expires may expire sooner, not later nor never; one that never expires may be given an expiry
        Instant in2h = Instant.now().plusSeconds(7200).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
        String later = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "l", "role", "client-read",
                "expires_at", in2h.toString())).body().at("/key/id").asText();
        assertThat(api.call("PATCH", keyPath(later), admin, Map.of("expires_at", in2h.plusSeconds(3600).toString())).status())
                .isEqualTo(403);
        assertThat(api.call("PATCH", keyPath(later), admin, java.util.Collections.singletonMap("expires_at", null)).status())
                .isEqualTo(403);
        assertThat(Instant.parse(api.call("GET", "/clients/" + client + "/keys", Api.READER, null).body().get("items")
                .findParents("id").stream().filter(k -> k.get("id").asText().equals(later)).findFirst().orElseThrow()
                .get("expires_at").asText())).as("unchanged").isEqualTo(in2h);
        Answer sooner = api.call("PATCH", keyPath(later), admin, Map.of("expires_at", in2h.minusSeconds(3600).toString()));
        assertThat(sooner.status()).as(String.valueOf(sooner.body())).isEqualTo(200);
        assertThat(Instant.parse(sooner.body().get("expires_at").asText())).isEqualTo(in2h.minusSeconds(3600));
        String adminId = api.call("GET", "/me", admin, null).body().get("key_id").asText();
        assertThat(api.call("PATCH", keyPath(adminId), admin, Map.of("expires_at", in2h.toString())).status())
                .as("its own, which never expired").isEqualTo(200);
        assertThat(api.call("PATCH", keyPath(adminId), admin, java.util.Collections.singletonMap("expires_at", null)).status())
                .isEqualTo(403);

        // the operator's token sets any expiry
        assertThat(api.call("PATCH", keyPath(expired), Api.ADMIN, java.util.Collections.singletonMap("expires_at", null))
                .body().get("state").asText()).isEqualTo("active");
    }

    /**
     * A portal session (a key that expires after 8 h) does not become a key that never expires: it cannot lift its
     * own expiry, and the keys it makes expire no later than it. Revoked by the operator, it is refused at once, and a
     * key beside it is not.
     */
    @Test
    void aPortalSessionMakesNoKeyThatOutlivesIt() throws Exception {
        String link = api.call("POST", "/clients/" + client + "/portal-links", Api.ADMIN, Map.of()).body().get("url").asText();
        java.net.http.HttpResponse<String> opened = java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest
                .newBuilder(java.net.URI.create("http://localhost:" + port + "/api/v1/portal/sessions"))
                .header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"link\": \"" + link.substring(link.indexOf("lwp_")) + "\"}"))
                .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(opened.statusCode()).as(opened.body()).isEqualTo(201);
        JsonNode session = new com.fasterxml.jackson.databind.ObjectMapper().readTree(opened.body());
        String token = session.get("token").asText(), id = session.at("/key/id").asText();
        Instant ends = Instant.parse(session.at("/key/expires_at").asText());
        String beside = key("client-admin");

        for (Object lift : new Object[] {null, ends.plusSeconds(3600).toString()}) {
            Answer refused = api.call("PATCH", keyPath(id), token, java.util.Collections.singletonMap("expires_at", lift));
            assertThat(refused.status()).as(lift + ": " + refused.body()).isEqualTo(403);
            assertThat(refused.body().get("field").asText()).isEqualTo("expires_at");
            java.util.Map<String, Object> longer = new java.util.HashMap<>(Map.of("name", "forever", "role", "client-admin"));
            if (lift != null) {
                longer.put("expires_at", lift);
            }
            Answer outliving = api.call("POST", "/clients/" + client + "/keys", token, longer);
            assertThat(outliving.status()).as(lift + ": " + outliving.body()).isEqualTo(403);
            assertThat(outliving.body().get("field").asText()).isEqualTo("expires_at");
        }
        assertThat(api.call("GET", "/clients/" + client + "/keys", Api.READER, null).body().get("items"))
                .as("no key made by the refusals").noneMatch(k -> k.get("name").asText().equals("forever"));
        Answer within = api.call("POST", "/clients/" + client + "/keys", token, Map.of("name", "within", "role", "client-read",
                "expires_at", ends.minusSeconds(60).toString()));
        assertThat(within.status()).as(String.valueOf(within.body())).isEqualTo(201);
        assertThat(api.call("PATCH", keyPath(id), token, Map.of("expires_at", ends.minusSeconds(60).toString())).status())
                .as("sooner").isEqualTo(200);

        assertThat(api.call("DELETE", keyPath(id), Api.ADMIN, null).status()).isEqualTo(204);
        assertThat(api.call("GET", "/me", token, null).status()).isEqualTo(401);
        assertThat(api.call("PATCH", keyPath(id), beside, Map.of("expires_at", ends.minusSeconds(120).toString()))
                .body().get("state").asText()).as("a revoked key stays revoked").isEqualTo("revoked");
        assertThat(api.call("GET", "/me", token, null).status()).isEqualTo(401);
        assertThat(api.call("GET", "/me", beside, null).status()).isEqualTo(200);
    }

    /**
     * Paused by an operator, a client stays paused until an operator resumes it: its own key's resume is a 403
     * naming enabled. A pause of its own it lifts; an operator pausing it meanwhile makes the pause the operator's.
     */
    @Test
    void aClientsKeyDoesNotResumeAnOperatorsPause() throws Exception {
        String admin = key("client-admin");
        String me = "/clients/" + client;
        assertThat(api.call("PUT", me, Api.ADMIN, Map.of("enabled", false)).body().get("enabled").asBoolean()).isFalse();
        Answer refused = api.call("PUT", me, admin, Map.of("enabled", true, "event_types", java.util.List.of("sensor.state_changed")));
        assertThat(refused.status()).as(String.valueOf(refused.body())).isEqualTo(403);
        assertThat(refused.body().get("field").asText()).isEqualTo("enabled");
        JsonNode after = api.call("GET", me, admin, null).body();
        assertThat(after.get("enabled").asBoolean()).isFalse();
        assertThat(after.get("paused_reason").asText()).isEqualTo("paused by an operator");
        assertThat(after.get("event_types").isNull()).as("nothing of the request applied").isTrue();
        assertThat(api.call("PUT", me, Api.ADMIN, Map.of("enabled", true)).body().get("enabled").asBoolean()).isTrue();

        // its own pause it lifts; the operator's pause over it is the operator's
        assertThat(api.call("PUT", me, admin, Map.of("enabled", false)).body().get("paused_reason").asText())
                .isEqualTo("paused by the client");
        assertThat(api.call("PUT", me, admin, Map.of("enabled", true)).body().get("enabled").asBoolean()).isTrue();
        api.call("PUT", me, admin, Map.of("enabled", false));
        assertThat(api.call("PUT", me, Api.ADMIN, Map.of("enabled", false)).body().get("paused_reason").asText())
                .isEqualTo("paused by an operator");
        assertThat(api.call("PUT", me, admin, Map.of("enabled", true)).status()).isEqualTo(403);
        assertThat(api.call("PUT", me, Api.ADMIN, Map.of("enabled", true)).body().get("enabled").asBoolean()).isTrue();
    }

    @org.springframework.beans.factory.annotation.Autowired org.apache.camel.CamelContext camel;
    @org.springframework.beans.factory.annotation.Autowired io.lockwatch.security.Bearers bearers;

    /**
     * Deleted, a client's keys are refused at once by the instance that deleted it, on the API's port and by the
     * feed listener's check alike, without waiting for the look at the changed keys (stopped here). A client made
     * again with the same name is another: the old key is nobody's.
     */
    @Test
    void aDeletedClientsKeyIsRefusedAtOnceByTheInstanceThatDeletedIt() throws Exception {
        String other = api.client(receiver, "/keys-deleted");
        Answer made = api.call("POST", "/clients/" + other + "/keys", Api.ADMIN, Map.of("name", "k", "role", "client-admin"));
        String token = made.body().get("token").asText();
        camel.getRouteController().stopRoute("changed-client-keys-are-forgotten");
        try {
            assertThat(api.call("GET", "/me", token, null).status()).isEqualTo(200);
            assertThat(bearers.who("Bearer " + token)).isNotNull();
            assertThat(api.call("DELETE", "/clients/" + other, Api.ADMIN, null).status()).isEqualTo(204);
            assertThat(api.call("GET", "/me", token, null).status()).isEqualTo(401);
            assertThat(bearers.who("Bearer " + token)).as("the feed listener's check").isNull();

            String again = api.client(receiver, "/keys-deleted");
            assertThat(api.call("GET", "/clients/" + again, token, null).status()).isEqualTo(401);
        } finally {
            camel.getRouteController().startRoute("changed-client-keys-are-forgotten");
        }
    }

    /** An expired key, proven lately, is refused by the feed listener's check as by the API. */
    @Test
    void anExpiredKeyIsRefusedByTheFeedListenersCheck() throws Exception {
        Answer made = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "f", "role", "client-read"));
        String token = made.body().get("token").asText();
        assertThat(bearers.who("Bearer " + token).clientKey().clientId().toString()).isEqualTo(client);
        api.call("PATCH", keyPath(made.body().at("/key/id").asText()), Api.ADMIN,
                Map.of("expires_at", Instant.now().minusSeconds(1).toString()));
        assertThat(bearers.who("Bearer " + token)).isNull();
        assertThat(api.call("GET", "/clients/" + client + "/feed", token, null).status()).isEqualTo(401);
    }

    /**
     * A client's key gets 403 on every actuator endpoint, health's status and the scrape included (health's details
     * name the database, the broker, the disk); without a token health says its status alone, an operator's token
     * sees the details.
     */
    @Test
    void aClientsKeyGets403OnTheActuator() throws Exception {
        for (String role : new String[] {"client-admin", "client-read"}) {
            String key = key(role);
            for (String path : new String[] {"/actuator/health", "/actuator/health/liveness", "/actuator/health/readiness",
                    "/actuator/health/db", "/actuator/prometheus", "/actuator", "/actuator/info", "/actuator/metrics",
                    "/actuator/jolokia/version", "/actuator/hawtio/"}) {
                java.net.http.HttpResponse<String> r = get(path, key);
                assertThat(r.statusCode()).as(role + " " + path + ": " + r.body()).isEqualTo(403);
                assertThat(r.body()).doesNotContain("components").doesNotContain("diskSpace");
            }
        }
        JsonNode anonymous = new com.fasterxml.jackson.databind.ObjectMapper().readTree(get("/actuator/health", null).body());
        assertThat(anonymous.get("status").asText()).isEqualTo("UP");
        assertThat(anonymous.has("components")).isFalse();
        for (String operator : new String[] {Api.READER, Api.ADMIN}) {
            java.net.http.HttpResponse<String> r = get("/actuator/health", operator);
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body()).has("components")).isTrue();
        }
    }

    private java.net.http.HttpResponse<String> get(String path, String token) throws Exception {
        java.net.http.HttpRequest.Builder b = java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://localhost:" + port + path));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return java.net.http.HttpClient.newHttpClient().send(b.build(), java.net.http.HttpResponse.BodyHandlers.ofString());
    }

    private String keyPath(String keyId) {
        return "/clients/" + client + "/keys/" + keyId;
    }

    private String key(String role) throws Exception {
        Answer made = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "k", "role", role));
        assertThat(made.status()).isEqualTo(201);
        return made.body().get("token").asText();
    }
}
