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

    private String key(String role) throws Exception {
        Answer made = api.call("POST", "/clients/" + client + "/keys", Api.ADMIN, Map.of("name", "k", "role", role));
        assertThat(made.status()).isEqualTo(201);
        return made.body().get("token").asText();
    }
}
