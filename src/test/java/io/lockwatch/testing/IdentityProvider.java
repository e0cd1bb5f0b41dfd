package io.lockwatch.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import no.nav.security.mock.oauth2.MockOAuth2Server;
import no.nav.security.mock.oauth2.OAuth2Config;
import no.nav.security.mock.oauth2.http.OAuth2HttpRequest;
import no.nav.security.mock.oauth2.http.OAuth2HttpResponse;
import no.nav.security.mock.oauth2.http.OAuth2HttpResponseKt;
import no.nav.security.mock.oauth2.http.Route;
import no.nav.security.mock.oauth2.token.KeyProvider;
import no.nav.security.mock.oauth2.token.OAuth2TokenProvider;

/**
 * A real OpenID Connect provider for the tests (NAV's mock-oauth2-server: discovery, JWKS, signed tokens), one per
 * test JVM on a port of its own, named in every test context as lockwatch's identity provider
 * ({@link IdentityProviderEnvironment}). It can publish a new key under a new key id (the provider rotating its keys),
 * be stopped (the provider away) and started again on the same port.
 */
public final class IdentityProvider {

    public static final String ISSUER_ID = "lockwatch", AUDIENCE = "lockwatch-api";
    public static final String OPERATOR = "lockwatch-operator", VIEWER = "lockwatch-viewer";

    private static IdentityProvider running;

    private final int port;
    private final KeyProvider keys = new KeyProvider();
    private final OAuth2TokenProvider tokens = new OAuth2TokenProvider(keys);
    /** Keys the provider publishes beside its own, as one does while it rotates to a new key. */
    private final List<RSAKey> published = new java.util.concurrent.CopyOnWriteArrayList<>();
    private MockOAuth2Server server;

    private IdentityProvider(int port) {
        this.port = port;
        start();
    }

    /** The JVM's provider, started the first time it is asked for. */
    public static synchronized IdentityProvider get() {
        if (running == null) {
            running = new IdentityProvider(freePort());
        }
        return running;
    }

    public String issuer() {
        return "http://localhost:" + port + "/" + ISSUER_ID;
    }

    /** An access token for lockwatch the provider issues, of a person with these roles, valid for an hour. */
    public synchronized String token(String subject, String name, List<String> roles) {
        return server.issueToken(ISSUER_ID, subject, AUDIENCE, Map.of("preferred_username", name, "roles", roles)).serialize();
    }

    /** A token the provider issues for this audience with these claims. */
    public synchronized String token(String subject, String audience, Map<String, Object> claims) {
        return server.issueToken(ISSUER_ID, subject, audience, claims).serialize();
    }

    /** Who the next person to sign in at the provider is (it asks nothing: the next authorisation is theirs). */
    public synchronized void nextSignIn(String subject, String name, List<String> roles) {
        server.enqueueCallback(new no.nav.security.mock.oauth2.token.DefaultOAuth2TokenCallback(ISSUER_ID, subject, "JWT",
                List.of(AUDIENCE), Map.of("preferred_username", name, "roles", roles), 3600));
    }

    /** The key the provider signs its tokens with (its private part too): for tokens it would never make. */
    public RSAKey signingKey() {
        return (RSAKey) keys.signingKey(ISSUER_ID);
    }

    /** A new key under a new key id, published in the provider's key set from now on: the provider rotating. */
    public RSAKey publishNewKey() {
        try {
            RSAKey key = new RSAKeyGenerator(2048).keyID("key-" + UUID.randomUUID()).generate();
            published.add(key);
            return key;
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Away: nothing answers on its port. */
    public synchronized void stop() {
        server.shutdown();
    }

    /** Back on the same port, with the same keys. */
    public synchronized void start() {
        // its key set: its own signing key and those it publishes beside it
        Route jwks = new Route() {
            @Override
            public boolean match(OAuth2HttpRequest request) {
                return request.getMethod().equals("GET") && request.getUrl().encodedPath().equals("/" + ISSUER_ID + "/jwks");
            }

            @Override
            public OAuth2HttpResponse invoke(OAuth2HttpRequest request) {
                List<com.nimbusds.jose.jwk.JWK> keys = new java.util.ArrayList<>(tokens.publicJwkSet(ISSUER_ID).getKeys());
                published.forEach(k -> keys.add(k.toPublicJWK()));
                return OAuth2HttpResponseKt.json(new com.nimbusds.jose.jwk.JWKSet(keys).toJSONObject());
            }
        };
        server = new MockOAuth2Server(new OAuth2Config(false, null, null, false, tokens), jwks);
        try {
            server.start(InetAddress.getLoopbackAddress(), port);
        } catch (RuntimeException e) {
            throw new IllegalStateException("the identity provider cannot listen on " + port, e);
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
