package io.lockwatch.security;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputFilter;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.Base64;
import java.util.Map;

import io.lockwatch.secrets.SecretCipher;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.Cookie;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.AuthenticationException;
import org.springframework.security.oauth2.client.OAuth2AuthorizedClient;
import org.springframework.security.oauth2.client.authentication.OAuth2AuthenticationToken;
import org.springframework.security.oauth2.client.registration.ClientRegistration;
import org.springframework.security.oauth2.client.registration.ClientRegistrationRepository;
import org.springframework.security.oauth2.client.web.AuthorizationRequestRepository;
import org.springframework.security.oauth2.client.web.OAuth2AuthorizedClientRepository;
import org.springframework.security.oauth2.core.AuthorizationGrantType;
import org.springframework.security.oauth2.core.ClientAuthenticationMethod;
import org.springframework.security.oauth2.core.endpoint.OAuth2AuthorizationRequest;
import org.springframework.security.oauth2.core.oidc.user.OidcUser;
import org.springframework.security.web.authentication.AuthenticationFailureHandler;
import org.springframework.security.web.authentication.AuthenticationSuccessHandler;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.HtmlUtils;

/**
 * The console's sign-in at the identity provider: Spring Security's authorisation code flow with PKCE, kept
 * stateless so that any instance takes the provider's answer. What the flow must remember between the redirect and
 * the answer (its state, nonce and PKCE verifier) rides in a cookie sealed with the service's secrets key; the
 * provider's access token is handed to the console's page, which calls the API with it as any token, until it
 * expires; signing out ends the session at the provider too (its end-session endpoint, naming the client).
 */
final class SsoSignIn {

    static final String REGISTRATION = "lockwatch";
    static final String START = "/oauth2/authorization/" + REGISTRATION;

    private SsoSignIn() {
    }

    /**
     * The provider as a client registration, read from its discovery document when the first person signs in (not
     * at start: a provider away does not keep the service from starting), with timeouts, and kept once read.
     */
    static final class Provider implements ClientRegistrationRepository {
        private final SsoProperties sso;
        private volatile ClientRegistration registration;
        /**
         * When the discovery document was last asked for, and whether it was away then: asked again a second later
         * if it was there, ten seconds later if it was away.
         */
        private volatile long lastRead;
        private volatile IllegalStateException lastFailure;

        Provider(SsoProperties sso) {
            this.sso = sso;
        }

        @Override
        public ClientRegistration findByRegistrationId(String id) {
            return REGISTRATION.equals(id) ? registration() : null;
        }

        ClientRegistration registration() {
            ClientRegistration r = registration;
            return r != null ? r : read();
        }

        /**
         * The discovery document read again (each sign-in starts so: a provider away is told before the browser is
         * sent there, and a provider's changed endpoints are followed).
         *
         * @throws IllegalStateException if it cannot be read now
         */
        ClientRegistration read() {
            // anyone may start a sign-in: however they knock, the provider is asked at most once a second
            synchronized (this) {
                long since = System.nanoTime() - lastRead;
                if (lastRead != 0 && lastFailure != null && since < 10_000_000_000L) {
                    throw lastFailure;
                }
                if (lastRead != 0 && lastFailure == null && registration != null && since < 1_000_000_000L) {
                    return registration;
                }
                lastRead = System.nanoTime();
                try {
                    lastFailure = null;
                    return fetch();
                } catch (IllegalStateException e) {
                    lastFailure = e;
                    throw e;
                }
            }
        }

        @SuppressWarnings("unchecked")
        private ClientRegistration fetch() {
            ClientRegistration r;
            Map<String, Object> discovery;
            try {
                discovery = SsoTokens.PROVIDER.getForObject(
                        sso.issuer().replaceAll("/+$", "") + "/.well-known/openid-configuration", Map.class);
            } catch (RuntimeException e) {
                throw new IllegalStateException("the identity provider's discovery document cannot be read: " + e.getMessage(), e);
            }
            if (discovery == null || !sso.issuer().equals(discovery.get("issuer"))) {
                throw new IllegalStateException("the identity provider's discovery document names another issuer");
            }
            r = ClientRegistration.withRegistrationId(REGISTRATION)
                    .clientId(sso.clientId())
                    .clientSecret(sso.clientSecret())
                    .clientAuthenticationMethod(sso.clientSecret() == null ? ClientAuthenticationMethod.NONE
                            : ClientAuthenticationMethod.CLIENT_SECRET_BASIC)
                    .authorizationGrantType(AuthorizationGrantType.AUTHORIZATION_CODE)
                    .redirectUri("{baseUrl}/login/oauth2/code/{registrationId}")
                    .scope(sso.scopes())
                    .authorizationUri((String) discovery.get("authorization_endpoint"))
                    .tokenUri((String) discovery.get("token_endpoint"))
                    .jwkSetUri((String) discovery.get("jwks_uri"))
                    .userInfoUri((String) discovery.get("userinfo_endpoint"))
                    .userNameAttributeName("sub")
                    .issuerUri(sso.issuer())
                    .providerConfigurationMetadata(discovery)
                    .clientName("lockwatch")
                    .build();
            registration = r;
            return r;
        }
    }

    /** {@code GET /console/sso}: tells the console's page that it may offer signing in at the provider, and where. */
    static final class Available extends OncePerRequestFilter {
        private final String path;

        Available(String path) {
            this.path = path;
        }

        @Override
        protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                throws ServletException, IOException {
            if (!request.getRequestURI().equals(path)) {
                chain.doFilter(request, response);
                return;
            }
            response.setStatus(200);
            response.setHeader("Cache-Control", "no-store");
            response.setContentType("application/json");
            response.getWriter().write("{\"sign_in\":\"" + START + "\"}");
        }
    }

    /** Before the redirect to the provider: a provider away is a page saying so, not an exception. */
    static final class ProviderAway extends OncePerRequestFilter {
        private final Provider provider;

        ProviderAway(Provider provider) {
            this.provider = provider;
        }

        @Override
        protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                throws ServletException, IOException {
            if (request.getRequestURI().startsWith(START)) {
                try {
                    provider.read();
                } catch (IllegalStateException e) {
                    response.setHeader("Retry-After", "30");
                    page(response, 503, "The identity provider cannot be reached",
                            "Signing in there is not possible now; try again in a moment. An API token still opens the console.");
                    return;
                }
            }
            chain.doFilter(request, response);
        }
    }

    /** The flow's state between the redirect and the answer, in a cookie only this service can read or write. */
    static final class SealedCookie implements AuthorizationRequestRepository<OAuth2AuthorizationRequest> {
        private static final String COOKIE = "lockwatch_sign_in";
        /** The classes a sealed OAuth2AuthorizationRequest is made of, and no others, in bounded size and depth. */
        private static final ObjectInputFilter ONLY_THE_REQUEST = ObjectInputFilter.Config.createFilter(
                "maxdepth=8;maxrefs=256;maxbytes=32768;maxarray=256;"
                        + "org.springframework.security.oauth2.core.endpoint.OAuth2AuthorizationRequest;"
                        + "org.springframework.security.oauth2.core.endpoint.OAuth2AuthorizationResponseType;"
                        + "org.springframework.security.oauth2.core.AuthorizationGrantType;"
                        + "java.util.Collections$UnmodifiableSet;java.util.Collections$UnmodifiableCollection;"
                        + "java.util.Collections$UnmodifiableMap;java.util.Collections$EmptyMap;java.util.Collections$EmptySet;"
                        + "java.util.LinkedHashSet;java.util.HashSet;java.util.LinkedHashMap;java.util.HashMap;java.util.Map$Entry;"
                        + "java.lang.String;java.lang.Object;!*");
        private static final String CONTEXT = "sign-in state";
        private final SecretCipher cipher;

        SealedCookie(SecretCipher cipher) {
            this.cipher = cipher;
        }

        @Override
        public OAuth2AuthorizationRequest loadAuthorizationRequest(HttpServletRequest request) {
            if (request.getCookies() == null) {
                return null;
            }
            for (Cookie c : request.getCookies()) {
                if (COOKIE.equals(c.getName())) {
                    return read(c.getValue());
                }
            }
            return null;
        }

        @Override
        public void saveAuthorizationRequest(OAuth2AuthorizationRequest authorization, HttpServletRequest request,
                                             HttpServletResponse response) {
            if (authorization == null) {
                set(response, request, "", 0);
                return;
            }
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            // compressed: a browser keeps a cookie of 4 KB at most
            try (ObjectOutputStream out = new ObjectOutputStream(new java.util.zip.GZIPOutputStream(bytes))) {
                out.writeObject(authorization);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            String sealed = cipher.sealFor(CONTEXT, Base64.getEncoder().encodeToString(bytes.toByteArray()));
            if (sealed.length() > 3800) {
                throw new IllegalStateException("the sign-in's state does not fit a cookie (" + sealed.length() + " characters)");
            }
            set(response, request, sealed, 600);
        }

        @Override
        public OAuth2AuthorizationRequest removeAuthorizationRequest(HttpServletRequest request, HttpServletResponse response) {
            OAuth2AuthorizationRequest authorization = loadAuthorizationRequest(request);
            set(response, request, "", 0);
            return authorization;
        }

        /** Null for anything this service did not seal. */
        private OAuth2AuthorizationRequest read(String value) {
            try {
                String opened = cipher.openFor(CONTEXT, value);
                if (opened == null) {
                    return null; // not sealed here for this: nothing is deserialized
                }
                byte[] bytes = Base64.getDecoder().decode(opened);
                try (ObjectInputStream in = new ObjectInputStream(new java.util.zip.GZIPInputStream(new ByteArrayInputStream(bytes)))) {
                    in.setObjectInputFilter(ONLY_THE_REQUEST);
                    return (OAuth2AuthorizationRequest) in.readObject();
                }
            } catch (RuntimeException | IOException | ClassNotFoundException e) {
                return null;
            }
        }

        private static void set(HttpServletResponse response, HttpServletRequest request, String value, int maxAge) {
            Cookie cookie = new Cookie(COOKIE, value);
            cookie.setPath("/login/oauth2/code/");
            cookie.setHttpOnly(true);
            cookie.setSecure(request.isSecure());
            cookie.setMaxAge(maxAge);
            // the provider's answer comes back as a top-level navigation from its site: Lax lets the cookie ride
            cookie.setAttribute("SameSite", "Lax");
            response.addCookie(cookie);
        }
    }

    /** Keeps nothing: the provider's tokens go to the page that signed in, for the success handler to hand over. */
    static final class HandedOver implements OAuth2AuthorizedClientRepository {
        static final String ATTRIBUTE = HandedOver.class.getName();

        @Override
        @SuppressWarnings("unchecked")
        public <T extends OAuth2AuthorizedClient> T loadAuthorizedClient(String id, Authentication principal, HttpServletRequest request) {
            return (T) request.getAttribute(ATTRIBUTE);
        }

        @Override
        public void saveAuthorizedClient(OAuth2AuthorizedClient client, Authentication principal, HttpServletRequest request,
                                         HttpServletResponse response) {
            request.setAttribute(ATTRIBUTE, client);
        }

        @Override
        public void removeAuthorizedClient(String id, Authentication principal, HttpServletRequest request,
                                           HttpServletResponse response) {
            request.removeAttribute(ATTRIBUTE);
        }
    }

    /**
     * The provider's access token, checked as the API checks it (audience, role), handed to the console's page in a
     * page that is not cached and that the console's script reads; or a page saying why the console cannot take it.
     */
    static final class Handover implements AuthenticationSuccessHandler {
        private final TokenAuthentication tokens;
        private final SignIns signIns;

        Handover(TokenAuthentication tokens, SignIns signIns) {
            this.tokens = tokens;
            this.signIns = signIns;
        }

        @Override
        public void onAuthenticationSuccess(HttpServletRequest request, HttpServletResponse response, Authentication signedIn)
                throws IOException {
            OAuth2AuthorizedClient client = (OAuth2AuthorizedClient) request.getAttribute(HandedOver.ATTRIBUTE);
            String token = client.getAccessToken().getTokenValue();
            Authentication person;
            try {
                person = tokens.authenticate(
                        org.springframework.security.authentication.UsernamePasswordAuthenticationToken.unauthenticated(null, token));
            } catch (AuthenticationException e) {
                page(response, 401, "The identity provider's token is not one lockwatch takes",
                        e.getMessage() + ". An administrator should check lockwatch.sso.audience against the audience the provider "
                                + "gives the console's access tokens.");
                return;
            }
            if (person.getAuthorities().isEmpty()) {
                page(response, 403, "No role of lockwatch's", "Signed in as " + person.getName() + ", but no role of yours is "
                        + "one lockwatch knows (lockwatch.sso.operator-roles, lockwatch.sso.viewer-roles): ask your administrator.");
                return;
            }
            OidcUser user = signedIn instanceof OAuth2AuthenticationToken t && t.getPrincipal() instanceof OidcUser u ? u : null;
            SsoTokens.Person who = (SsoTokens.Person) person.getDetails();
            java.time.Instant expires = client.getAccessToken().getExpiresAt();
            signIns.signedIn(who.subject(), who.name(), user == null ? null : user.getIdToken().getClaimAsString("sid"),
                    expires == null ? java.time.Instant.now().plusSeconds(3600) : expires);
            Object endSession = client.getClientRegistration().getProviderDetails().getConfigurationMetadata()
                    .get("end_session_endpoint");
            response.setStatus(200);
            response.setHeader("Cache-Control", "no-store");
            response.setHeader("Referrer-Policy", "no-referrer");
            response.setContentType("text/html;charset=utf-8");
            response.getWriter().write("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>lockwatch</title>"
                    // not the ID token: signing out names the client instead, so the ID token never leaves the server
                    + meta("lockwatch-token", token) + meta("lockwatch-client-id", client.getClientRegistration().getClientId())
                    + meta("lockwatch-end-session", endSession == null ? "" : endSession.toString())
                    + "<script src=\"/console/signed-in.js\"></script></head><body><p>Signed in; opening the console…</p>"
                    + "</body></html>");
        }

        private static String meta(String name, String value) {
            return "<meta name=\"" + name + "\" content=\"" + HtmlUtils.htmlEscape(value) + "\">";
        }
    }

    /**
     * The provider's back-channel logout ({@code POST}, a {@code logout_token}): a JWT signed by the provider, for the
     * console's client, with the back-channel logout event and no nonce, naming the person (sub) or their provider
     * session (sid). The person is signed out here as an operator would sign them out.
     */
    static final class BackChannelLogout extends OncePerRequestFilter {
        static final String PATH = SignIns.BACK_CHANNEL_LOGOUT_PATH;
        private static final String EVENT = "http://schemas.openid.net/event/backchannel-logout";
        private final Provider provider;
        private final SsoProperties sso;
        private final SignIns signIns;
        private static final java.time.Duration MAX_AGE = java.time.Duration.ofMinutes(5);
        private final com.github.benmanes.caffeine.cache.Cache<String, Boolean> used = com.github.benmanes.caffeine.cache.Caffeine
                .newBuilder().expireAfterWrite(MAX_AGE.multipliedBy(3)).maximumSize(100_000).build();
        private volatile org.springframework.security.oauth2.jwt.JwtDecoder decoder;

        BackChannelLogout(Provider provider, SsoProperties sso, SignIns signIns) {
            this.provider = provider;
            this.sso = sso;
            this.signIns = signIns;
        }

        @Override
        protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                throws ServletException, IOException {
            if (!request.getRequestURI().equals(PATH)) {
                chain.doFilter(request, response);
                return;
            }
            response.setHeader("Cache-Control", "no-store");
            String token = "POST".equals(request.getMethod()) ? request.getParameter("logout_token") : null;
            if (token == null) {
                io.lockwatch.api.Problems.write(response, 400, "Bad Request", "a POST with a logout_token is expected");
                return;
            }
            org.springframework.security.oauth2.jwt.Jwt logout;
            try {
                logout = decoder().decode(token);
            } catch (org.springframework.security.oauth2.jwt.BadJwtException e) {
                io.lockwatch.api.Problems.write(response, 400, "Bad Request", "not a logout token of the identity provider: "
                        + e.getMessage());
                return;
            } catch (RuntimeException e) {
                io.lockwatch.api.Problems.write(response, 503, "Service Unavailable", "the identity provider's keys cannot be read now");
                return;
            }
            // each logout token once (within its age, the only time it is taken)
            if (used.asMap().putIfAbsent(logout.getId(), Boolean.TRUE) != null) {
                io.lockwatch.api.Problems.write(response, 400, "Bad Request", "this logout token was taken already");
                return;
            }
            try {
                signIns.signOutAtTheProvidersWord(logout.getSubject(), logout.getClaimAsString("sid"));
            } catch (RuntimeException e) {
                used.invalidate(logout.getId()); // not signed out: the provider's retry with this token must be taken
                throw e;
            }
            response.setStatus(200);
        }

        private org.springframework.security.oauth2.jwt.JwtDecoder decoder() {
            org.springframework.security.oauth2.jwt.JwtDecoder d = decoder;
            if (d == null) {
                org.springframework.security.oauth2.jwt.NimbusJwtDecoder built = org.springframework.security.oauth2.jwt.NimbusJwtDecoder
                        .withJwkSetUri(provider.registration().getProviderDetails().getJwkSetUri())
                        .restOperations(SsoTokens.PROVIDER)
                        .jwsAlgorithms(a -> a.addAll(SsoTokens.ALGORITHMS))
                        // its type is logout+jwt (some providers say JWT, or nothing); Spring's own check takes JWT alone
                        .validateType(false)
                        .jwtProcessorCustomizer(processor -> processor.setJWSTypeVerifier(
                                new com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier<>(
                                        new com.nimbusds.jose.JOSEObjectType("logout+jwt"), com.nimbusds.jose.JOSEObjectType.JWT, null)))
                        .build();
                built.setJwtValidator(new org.springframework.security.oauth2.core.DelegatingOAuth2TokenValidator<>(
                        new org.springframework.security.oauth2.jwt.JwtIssuerValidator(sso.issuer()),
                        new org.springframework.security.oauth2.jwt.JwtTimestampValidator(sso.clockSkew()),
                        jwt -> {
                            java.time.Instant now = java.time.Instant.now();
                            boolean ok = jwt.getAudience() != null && jwt.getAudience().contains(sso.clientId())
                                    && jwt.getClaim("nonce") == null && jwt.getId() != null
                                    // issued lately: an old one, caught and sent again, is not taken
                                    && jwt.getIssuedAt() != null && jwt.getIssuedAt().isAfter(now.minus(MAX_AGE).minus(sso.clockSkew()))
                                    && jwt.getIssuedAt().isBefore(now.plus(sso.clockSkew()))
                                    && jwt.getClaim("events") instanceof Map<?, ?> events && events.containsKey(EVENT)
                                    && (jwt.getSubject() != null || jwt.getClaim("sid") != null);
                            return ok ? org.springframework.security.oauth2.core.OAuth2TokenValidatorResult.success()
                                    : org.springframework.security.oauth2.core.OAuth2TokenValidatorResult.failure(
                                    new org.springframework.security.oauth2.core.OAuth2Error("invalid_request",
                                            "a logout token names the console's client, the back-channel logout event, sub or sid, and no nonce", null));
                        }));
                decoder = d = built;
            }
            return d;
        }
    }

    /** The provider refused, or its answer was not the one this service asked for: a page saying so. */
    static AuthenticationFailureHandler failed() {
        return (request, response, e) -> page(response, 401, "Signing in did not succeed",
                "The identity provider's answer was not taken (" + e.getMessage() + "). Try again from the console.");
    }

    static void page(HttpServletResponse response, int status, String title, String detail) throws IOException {
        response.setStatus(status);
        response.setHeader("Cache-Control", "no-store");
        response.setContentType("text/html;charset=utf-8");
        response.getWriter().write("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>lockwatch: "
                + HtmlUtils.htmlEscape(title) + "</title></head><body><h1>" + HtmlUtils.htmlEscape(title) + "</h1><p id=\"detail\">"
                + HtmlUtils.htmlEscape(detail) + "</p><p><a href=\"/console/\">Back to the console</a></p></body></html>");
    }
}
