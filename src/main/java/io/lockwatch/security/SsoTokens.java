package io.lockwatch.security;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.springframework.security.authentication.AuthenticationServiceException;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.oauth2.core.DelegatingOAuth2TokenValidator;
import org.springframework.security.oauth2.jose.jws.SignatureAlgorithm;
import org.springframework.security.oauth2.jwt.BadJwtException;
import org.springframework.security.oauth2.jwt.Jwt;
import org.springframework.security.oauth2.jwt.JwtClaimValidator;
import org.springframework.security.oauth2.jwt.JwtDecoder;
import org.springframework.security.oauth2.jwt.JwtException;
import org.springframework.security.oauth2.jwt.JwtIssuerValidator;
import org.springframework.security.oauth2.jwt.JwtTimestampValidator;
import org.springframework.security.oauth2.jwt.NimbusJwtDecoder;

/**
 * A person's access token from the organisation's identity provider, checked by Spring Security's decoder: signed by
 * one of the provider's keys (its JWKS, fetched again when a token names a key it has not seen, so the provider may
 * rotate them), issued by it, for lockwatch's audience, and not expired. An unsigned token ({@code alg: none}) is
 * not one. The person's role comes from the claim configured: operator, viewer, or none (then every door is 403, with
 * a detail saying so).
 *
 * <p>The provider is asked for its configuration when the first token comes, not at start: a provider away does not
 * keep the service from starting, and its static tokens and client keys work meanwhile. A token that cannot be checked
 * because the provider is away is a 503, not the caller's fault.
 */
final class SsoTokens {

    /** A person as the provider names them. */
    record Person(String subject, String name, Set<String> roles) {
    }

    static final String NOT_VALID = "not a valid token of the identity provider: ";
    /** What a provider signs with: never "none", never HMAC (a shared secret). */
    static final List<SignatureAlgorithm> ALGORITHMS = List.of(SignatureAlgorithm.RS256, SignatureAlgorithm.RS384,
            SignatureAlgorithm.RS512, SignatureAlgorithm.ES256, SignatureAlgorithm.ES384, SignatureAlgorithm.ES512,
            SignatureAlgorithm.PS256, SignatureAlgorithm.PS384, SignatureAlgorithm.PS512);

    /**
     * How lockwatch asks the identity provider anything (discovery, keys): a provider that does not answer holds up
     * the request that needed it 3 s to connect and 5 s to answer at most, not a thread for ever.
     */
    static final org.springframework.web.client.RestOperations PROVIDER = providerHttp();

    private final SsoProperties props;
    private final SignIns signIns;
    private volatile JwtDecoder decoder;

    /** @param signIns who was signed out since; null: nobody ever is (tests of tokens alone) */
    SsoTokens(SsoProperties props, SignIns signIns) {
        this.props = props;
        this.signIns = signIns;
    }

    boolean enabled() {
        return props.enabled();
    }

    /** A compact JWS: three base64url parts, the first a JSON object. Anything else is a static token or a key. */
    static boolean looksLikeOne(String token) {
        return token.startsWith("eyJ") && token.chars().filter(c -> c == '.').count() == 2;
    }

    Authentication authenticate(String token) {
        JwtDecoder d;
        try {
            d = decoder();
        } catch (RuntimeException e) {
            // its discovery document could not be read: tried again with the next token
            throw new AuthenticationServiceException("the identity provider cannot be reached to check the token", e);
        }
        Jwt jwt;
        try {
            jwt = d.decode(token);
        } catch (BadJwtException e) {
            throw new BadCredentialsException(NOT_VALID + e.getMessage());
        } catch (JwtException e) {
            throw new AuthenticationServiceException("the identity provider cannot be reached to check the token", e);
        }
        if (jwt.getSubject() == null || jwt.getSubject().isBlank()) {
            throw new BadCredentialsException(NOT_VALID + "it names no subject (sub)");
        }
        // an ID token is the console's proof of sign-in, not a key to the API, though its aud may be the same client
        // id; what marks one (some providers put a nonce in access tokens too; Keycloak types its own). The console's
        // page is never given it.
        if (jwt.hasClaim("at_hash") || jwt.hasClaim("c_hash") || "ID".equals(jwt.getClaimAsString("typ"))) {
            throw new BadCredentialsException(NOT_VALID + "it is an ID token (at_hash): the API takes access tokens");
        }
        boolean signedOut;
        try {
            signedOut = signIns != null && signIns.signedOutSince(jwt.getSubject(), jwt.getIssuedAt());
        } catch (org.springframework.dao.DataAccessException e) {
            throw new AuthenticationServiceException("sign-outs cannot be checked now", e);
        }
        if (signedOut) {
            throw new BadCredentialsException(NOT_VALID + "this person was signed out after it was issued (by an operator, "
                    + "or at the identity provider): sign in again");
        }
        Set<String> roles = roles(jwt);
        Caller caller = roles.stream().anyMatch(props.operatorRoles()::contains) ? Caller.FULL
                : roles.stream().anyMatch(props.viewerRoles()::contains) ? Caller.READ : Caller.ANONYMOUS;
        String name = jwt.getClaimAsString(props.nameClaim());
        if (name == null || name.isBlank()) {
            name = jwt.getSubject();
        }
        UsernamePasswordAuthenticationToken person = UsernamePasswordAuthenticationToken.authenticated(name, null,
                caller.authorities());
        person.setDetails(new Person(jwt.getSubject(), name, roles));
        return person;
    }

    private JwtDecoder decoder() {
        JwtDecoder d = decoder;
        if (d == null) {
            synchronized (this) {
                if (decoder == null) {
                    NimbusJwtDecoder built = NimbusJwtDecoder.withIssuerLocation(props.issuer())
                            .restOperations(PROVIDER)
                            // named, so that no key set is fetched to learn them; never "none", never HMAC
                            .jwsAlgorithms(a -> a.addAll(ALGORITHMS))
                            .build();
                    built.setJwtValidator(new DelegatingOAuth2TokenValidator<>(
                            new JwtTimestampValidator(props.clockSkew()),
                            new JwtIssuerValidator(props.issuer()),
                            new JwtClaimValidator<Collection<String>>("aud", aud -> aud != null && aud.contains(props.audience()))));
                    decoder = built;
                }
                d = decoder;
            }
        }
        return d;
    }

    private static org.springframework.web.client.RestOperations providerHttp() {
        org.springframework.http.client.SimpleClientHttpRequestFactory http =
                new org.springframework.http.client.SimpleClientHttpRequestFactory();
        http.setConnectTimeout(3_000);
        http.setReadTimeout(5_000);
        return new org.springframework.web.client.RestTemplate(http);
    }

    /** The names in the roles claim, a dotted path into the token's claims; a list or a space-separated string. */
    private Set<String> roles(Jwt jwt) {
        Object at = jwt.getClaims();
        for (String part : props.rolesClaim().split("\\.")) {
            at = at instanceof Map<?, ?> map ? map.get(part) : null;
        }
        Set<String> roles = new LinkedHashSet<>();
        if (at instanceof Collection<?> list) {
            list.forEach(r -> roles.add(String.valueOf(r)));
        } else if (at instanceof String text) {
            roles.addAll(new ArrayList<>(List.of(text.trim().split("\\s+"))));
            roles.remove("");
        }
        return roles;
    }
}
