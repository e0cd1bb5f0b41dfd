package io.lockwatch.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import io.lockwatch.notify.WebhookReceiver;
import io.lockwatch.testing.Api;
import io.lockwatch.testing.Api.Answer;
import io.lockwatch.testing.IdentityProvider;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * People signed in at the organisation's identity provider (a real OpenID Connect provider run by the test, the one
 * every test context names): a person's access token reaches the API with the role the provider's claim gives, is
 * named in the audit log and on /me; an unmapped person is refused with a reason; a token that is expired, for
 * another audience, from another issuer, unsigned or signed by a key the provider does not hold is refused; the
 * provider's keys rotated are taken; the provider away leaves static tokens working and answers a token it must
 * vouch for with a 503.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SsoTest {

    @RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @LocalServerPort int port;
    @Autowired JdbcTemplate jdbc;
    Api api;
    final IdentityProvider provider = IdentityProvider.get();

    @BeforeEach
    void api() {
        api = new Api(port);
    }

    @Test
    void anOperatorActsWithTheProvidersTokenAndIsNamedInTheAuditLog() throws Exception {
        String sub = "sub-" + UUID.randomUUID();
        String alice = provider.token(sub, "alice", List.of("staff", IdentityProvider.OPERATOR));

        Answer me = api.call("GET", "/me", alice, null);
        assertThat(me.status()).as(String.valueOf(me.body())).isEqualTo(200);
        assertThat(me.body().get("kind").asText()).isEqualTo("operator");
        assertThat(me.body().get("role").asText()).isEqualTo("operator-full");
        assertThat(me.body().get("name").asText()).isEqualTo("alice");

        Answer created = api.call("POST", "/clients", alice, Map.of("name", "sso " + sub, "url", receiver.url("/sso")));
        assertThat(created.status()).isEqualTo(201);
        Map<String, Object> entry = jdbc.queryForMap("SELECT actor, actor_kind, actor_subject, status FROM audit_log "
                + "WHERE operation = 'createClient' AND actor_subject = ?", sub);
        assertThat(entry).containsEntry("actor", "alice").containsEntry("actor_kind", "person").containsEntry("status", 201);
    }

    @Test
    void aViewerReadsAndChangesNothingAndAPersonWithoutARoleOfLockwatchsIsToldSo() throws Exception {
        String viewer = provider.token("sub-viewer", "victor", List.of(IdentityProvider.VIEWER));
        assertThat(api.call("GET", "/sensors", viewer, null).status()).isEqualTo(200);
        assertThat(api.call("GET", "/me", viewer, null).body().get("role").asText()).isEqualTo("operator-read");
        Answer refused = api.call("POST", "/clients", viewer, Map.of("name", "x", "url", receiver.url("/x")));
        assertThat(refused.status()).isEqualTo(403);

        String nobody = provider.token("sub-nobody", "nora", List.of("accounting"));
        for (String[] call : new String[][] {{"GET", "/sensors"}, {"GET", "/me"}, {"DELETE", "/sensors/X1"}}) {
            Answer a = api.call(call[0], call[1], nobody, null);
            assertThat(a.status()).as(call[1]).isEqualTo(403);
            assertThat(a.body().get("detail").asText()).startsWith("signed in as nora, but no role of yours");
        }
    }

    @Test
    void aTokenTheProviderDoesNotVouchForIsRefused() throws Exception {
        assertRefused(provider.token("sub-m", "another-application",
                Map.of("preferred_username", "mallory", "roles", List.of(IdentityProvider.OPERATOR))), "aud");

        RSAKey key = provider.signingKey();
        JWTClaimsSet.Builder claims = operator("sub-m", "mallory");
        // the provider's own key, signed as it signs: taken; then each thing wrong with it, refused
        assertThat(api.call("GET", "/me", signed(key, claims.build()), null).status()).isEqualTo(200);
        assertRefused(signed(key, operator("sub-m", "mallory").issueTime(Date.from(Instant.now().minusSeconds(7200)))
                .expirationTime(Date.from(Instant.now().minusSeconds(3600))).build()), "expired");
        assertRefused(signed(key, operator("sub-m", "mallory").issuer("http://localhost:1/elsewhere").build()), "iss");
        assertRefused(new PlainJWT(claims.build()).serialize(), "");
        RSAKey forged = new RSAKeyGenerator(2048).keyID(key.getKeyID()).generate();
        assertRefused(signed(forged, claims.build()), "signature");
    }

    @Test
    void rotatedKeysAreTakenAndWhileTheProviderIsAwayStaticTokensStillWork() throws Exception {
        assertThat(api.call("GET", "/me", provider.token("sub-r", "rita", List.of(IdentityProvider.OPERATOR)), null).status())
                .isEqualTo(200);
        // the provider rotates: a new key under a new id in its key set, the new tokens signed with it
        RSAKey rotated = provider.publishNewKey();
        assertThat(api.call("GET", "/me", signed(rotated, operator("sub-r", "rita").build()), null).status())
                .as("a token of the new key").isEqualTo(200);

        String needsTheProvider = signed(new RSAKeyGenerator(2048).keyID("key-never-published").generate(),
                operator("sub-r", "rita").build());
        provider.stop();
        try {
            assertThat(api.call("GET", "/sensors", Api.ADMIN, null).status()).as("a static token").isEqualTo(200);
            Answer away = api.call("GET", "/me", needsTheProvider, null);
            assertThat(away.status()).isEqualTo(503);
            assertThat(away.body().get("detail").asText()).contains("identity provider cannot be reached");
        } finally {
            provider.start(); // back, for the other tests of this JVM
        }
    }

    @Test
    void aPersonSignedOutByAnOperatorOrByTheProvidersBackChannelIsRefusedEverywhere() throws Exception {
        String sub = "sub-" + UUID.randomUUID();
        String before = signed(provider.signingKey(), operator(sub, "sam").issueTime(Date.from(Instant.now().minusSeconds(5))).build());
        assertThat(api.call("GET", "/me", before, null).status()).isEqualTo(200);
        UUID signIn = signIns.signedIn(sub, "sam", "sid-" + sub, Instant.now().plusSeconds(3600));
        assertThat(api.call("GET", "/sessions", Api.READER, null).body().get("items").findValuesAsText("subject")).contains(sub);

        // an operator ends it: sam's tokens issued until now are refused, and the list no longer has him
        assertThat(api.call("POST", "/sessions/" + signIn + "/end", Api.ADMIN, null).status()).isEqualTo(204);
        Answer refused = api.call("GET", "/me", before, null);
        assertThat(refused.status()).isEqualTo(401);
        assertThat(refused.body().get("detail").asText()).contains("signed out");
        assertThat(api.call("GET", "/sessions", Api.READER, null).body().get("items").findValuesAsText("subject")).doesNotContain(sub);
        assertThat(jdbc.queryForObject("SELECT actor FROM audit_log WHERE operation = 'endSession' AND resource = ?",
                String.class, "sessions/" + signIn + "/end")).isEqualTo("full-token-1");
        assertThat(api.call("POST", "/sessions/" + UUID.randomUUID() + "/end", Api.ADMIN, null).status()).isEqualTo(404);
        // a token issued after it (signing in again) is taken
        String after = signed(provider.signingKey(), operator(sub, "sam").issueTime(Date.from(Instant.now().plusSeconds(2))).build());
        assertThat(api.call("GET", "/me", after, null).status()).isEqualTo(200);

        // the provider's back-channel logout, naming the provider's session alone
        String sub2 = "sub-" + UUID.randomUUID();
        String rita = signed(provider.signingKey(), operator(sub2, "rita").issueTime(Date.from(Instant.now().minusSeconds(5))).build());
        signIns.signedIn(sub2, "rita", "sid-" + sub2, Instant.now().plusSeconds(3600));
        JWTClaimsSet.Builder logout = new JWTClaimsSet.Builder().issuer(provider.issuer()).audience(IdentityProvider.AUDIENCE)
                .issueTime(new Date()).jwtID(UUID.randomUUID().toString()).claim("sid", "sid-" + sub2)
                .claim("events", Map.of("http://schemas.openid.net/event/backchannel-logout", Map.of()));
        assertThat(backChannel(signed(provider.signingKey(), logout.claim("nonce", "n").build()))).as("a nonce: not a logout token")
                .isEqualTo(400);
        assertThat(api.call("GET", "/me", rita, null).status()).isEqualTo(200);
        assertThat(backChannel(signed(new RSAKeyGenerator(2048).keyID(provider.signingKey().getKeyID()).generate(),
                logout.claim("nonce", null).build()))).as("forged").isEqualTo(400);
        assertThat(backChannel(signed(provider.signingKey(), logout.claim("nonce", null).jwtID(null).build()))).as("no jti")
                .isEqualTo(400);
        String valid = signed(provider.signingKey(), logout.jwtID(UUID.randomUUID().toString()).build());
        assertThat(backChannel(valid)).isEqualTo(200);
        assertThat(api.call("GET", "/me", rita, null).status()).isEqualTo(401);
        assertThat(backChannel(valid)).as("the same logout token again").isEqualTo(400);
        // each one in the audit log, without its token
        assertThat(jdbc.queryForList("SELECT status FROM audit_log WHERE operation = 'backChannelLogout' AND at > now() - interval '1 minute'",
                Integer.class)).contains(200, 400);
        assertThat(String.join("\n", jdbc.queryForList("SELECT audit_log::text FROM audit_log WHERE operation = 'backChannelLogout'",
                String.class))).doesNotContain(valid.substring(valid.lastIndexOf('.') + 1));
    }

    private int backChannel(String logoutToken) throws Exception {
        return java.net.http.HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                        "http://localhost:" + port + "/logout/connect/back-channel/lockwatch"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("logout_token=" + logoutToken)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    @Autowired SignIns signIns;

    /** The claims of an operator's token as the provider makes them, valid for an hour. */
    private JWTClaimsSet.Builder operator(String subject, String name) {
        return new JWTClaimsSet.Builder().subject(subject).issuer(provider.issuer()).audience(IdentityProvider.AUDIENCE)
                .issueTime(new Date()).expirationTime(Date.from(Instant.now().plusSeconds(3600)))
                .claim("preferred_username", name).claim("roles", List.of(IdentityProvider.OPERATOR));
    }

    private void assertRefused(String token, String detailHas) throws Exception {
        Answer a = api.call("GET", "/me", token, null);
        assertThat(a.status()).as(String.valueOf(a.body())).isEqualTo(401);
        JsonNode detail = a.body().get("detail");
        assertThat(detail.asText()).contains(detailHas);
    }

    private static String signed(RSAKey key, JWTClaimsSet claims) throws Exception {
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(key.getKeyID())
                .type(JOSEObjectType.JWT).build(), claims);
        jwt.sign(new RSASSASigner(key));
        return jwt.serialize();
    }
}
