package io.lockwatch.security;

import java.time.Duration;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Operators signed in at the organisation's OpenID Connect provider: the API takes its access tokens (JWT), checked
 * against its keys, and gives each person the role the provider's claim names.
 *
 * @param issuer        the provider's issuer URL (its discovery document is {@code <issuer>/.well-known/openid-configuration});
 *                      unset: no sign-in through a provider, tokens only
 * @param audience      what a token's {@code aud} must hold (the client id the provider gives lockwatch)
 * @param rolesClaim    the claim that carries a person's roles or groups; a dotted path reaches into an object
 *                      ({@code realm_access.roles} for Keycloak); a list, or a string of space-separated names
 * @param nameClaim     the claim that names the person in the audit log and on acknowledgements ({@code sub} if absent)
 * @param operatorRoles roles that may do everything a full token does
 * @param viewerRoles   roles that may read, as a read token does
 * @param clockSkew     how far a token's times may be off the service's clock
 * @param clientId      the console's client id at the provider, for signing in there (default: the audience)
 * @param clientSecret  its secret, if the provider gave it one (a confidential client); none: a public client, PKCE alone
 * @param scopes        what the console's sign-in asks the provider for
 */
@ConfigurationProperties("lockwatch.sso")
record SsoProperties(String issuer, String audience, String rolesClaim, String nameClaim, List<String> operatorRoles,
                     List<String> viewerRoles, Duration clockSkew, String clientId, String clientSecret,
                     List<String> scopes) {

    SsoProperties {
        issuer = issuer == null || issuer.isBlank() ? null : issuer.trim();
        rolesClaim = rolesClaim == null || rolesClaim.isBlank() ? "roles" : rolesClaim;
        nameClaim = nameClaim == null || nameClaim.isBlank() ? "preferred_username" : nameClaim;
        operatorRoles = operatorRoles == null ? List.of("lockwatch-operator") : List.copyOf(operatorRoles);
        viewerRoles = viewerRoles == null ? List.of("lockwatch-viewer") : List.copyOf(viewerRoles);
        clockSkew = clockSkew == null ? Duration.ofSeconds(60) : clockSkew;
        clientId = clientId == null || clientId.isBlank() ? audience : clientId;
        clientSecret = clientSecret == null || clientSecret.isBlank() ? null : clientSecret;
        scopes = scopes == null || scopes.isEmpty() ? List.of("openid", "profile", "email") : List.copyOf(scopes);
        if (issuer != null && (audience == null || audience.isBlank())) {
            throw new IllegalStateException("lockwatch.sso.issuer is set: set lockwatch.sso.audience too (the client id the "
                    + "provider gives lockwatch), so that a token the provider made for another application is refused");
        }
    }

    boolean enabled() {
        return issuer != null;
    }
}
