package io.lockwatch.security;

import io.lockwatch.secrets.SecretCipher;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.oauth2.client.web.DefaultOAuth2AuthorizationRequestResolver;
import org.springframework.security.oauth2.client.web.OAuth2AuthorizationRequestCustomizers;
import org.springframework.security.oauth2.client.web.OAuth2AuthorizationRequestRedirectFilter;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.context.RequestAttributeSecurityContextRepository;

/**
 * Where people sign in at the identity provider ({@code lockwatch.sso.issuer}), the console's way there and back: a
 * chain of its own on the flow's paths alone, before the doors' chain, holding no session ({@link SsoSignIn}).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("!'${lockwatch.sso.issuer:}'.isBlank()")
class SsoSignInConfiguration {

    static final String AVAILABLE = "/console/sso";

    /**
     * The provider's ID tokens checked as Spring checks them (issuer, audience, expiry, nonce), signed with any of the
     * asymmetric algorithms lockwatch takes: Spring's own factory takes one algorithm, RS256 by default, and a provider
     * signing with ES256 would refuse every sign-in.
     */
    @Bean
    org.springframework.security.oauth2.jwt.JwtDecoderFactory<org.springframework.security.oauth2.client.registration.ClientRegistration>
            idTokenDecoders(SsoProperties sso) {
        java.util.Map<String, org.springframework.security.oauth2.jwt.JwtDecoder> decoders = new java.util.concurrent.ConcurrentHashMap<>();
        return registration -> decoders.computeIfAbsent(registration.getRegistrationId() + " " + registration.getProviderDetails().getJwkSetUri(),
                key -> {
                    org.springframework.security.oauth2.jwt.NimbusJwtDecoder decoder = org.springframework.security.oauth2.jwt.NimbusJwtDecoder
                            .withJwkSetUri(registration.getProviderDetails().getJwkSetUri())
                            .restOperations(SsoTokens.PROVIDER)
                            .jwsAlgorithms(a -> a.addAll(SsoTokens.ALGORITHMS)).build();
                    decoder.setJwtValidator(new org.springframework.security.oauth2.core.DelegatingOAuth2TokenValidator<>(
                            new org.springframework.security.oauth2.jwt.JwtTimestampValidator(sso.clockSkew()),
                            new org.springframework.security.oauth2.client.oidc.authentication.OidcIdTokenValidator(registration)));
                    decoder.setClaimSetConverter(new org.springframework.security.oauth2.core.converter.ClaimTypeConverter(
                            org.springframework.security.oauth2.client.oidc.authentication.OidcIdTokenDecoderFactory
                                    .createDefaultClaimTypeConverters()));
                    return decoder;
                });
    }

    @Bean
    @Order(Ordered.HIGHEST_PRECEDENCE)
    SecurityFilterChain signInAtTheIdentityProvider(HttpSecurity http, SsoProperties sso, SecretCipher cipher,
                                                   TokenAuthentication tokens, SignIns signIns) throws Exception {
        SsoSignIn.Provider provider = new SsoSignIn.Provider(sso);
        DefaultOAuth2AuthorizationRequestResolver resolver = new DefaultOAuth2AuthorizationRequestResolver(provider,
                OAuth2AuthorizationRequestRedirectFilter.DEFAULT_AUTHORIZATION_REQUEST_BASE_URI);
        // PKCE whether or not the provider gave the console a secret
        resolver.setAuthorizationRequestCustomizer(OAuth2AuthorizationRequestCustomizers.withPkce());
        // the provider's answer is checked by the OpenID Connect providers the sign-in adds alone: the doors' tokens
        // (the application's AuthenticationManager) are no fallback for it, and would hide why an answer was refused
        http.getSharedObject(org.springframework.security.config.annotation.authentication.builders.AuthenticationManagerBuilder.class)
                .parentAuthenticationManager(null);
        return http
                .securityMatcher("/oauth2/authorization/**", "/login/oauth2/code/**", AVAILABLE, SsoSignIn.BackChannelLogout.PATH)
                // the flow's own state and PKCE guard its answer; nothing here acts for a caller's credentials
                .csrf(csrf -> csrf.disable())
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .securityContext(c -> c.securityContextRepository(new RequestAttributeSecurityContextRepository()))
                .requestCache(cache -> cache.disable())
                .addFilterBefore(new SsoSignIn.ProviderAway(provider), OAuth2AuthorizationRequestRedirectFilter.class)
                .addFilterBefore(new SsoSignIn.Available(AVAILABLE), OAuth2AuthorizationRequestRedirectFilter.class)
                .addFilterBefore(new SsoSignIn.BackChannelLogout(provider, sso, signIns), OAuth2AuthorizationRequestRedirectFilter.class)
                .oauth2Login(login -> login
                        .clientRegistrationRepository(provider)
                        .authorizedClientRepository(new SsoSignIn.HandedOver())
                        .authorizationEndpoint(a -> a.authorizationRequestRepository(new SsoSignIn.SealedCookie(cipher))
                                .authorizationRequestResolver(resolver))
                        .successHandler(new SsoSignIn.Handover(tokens, signIns))
                        .failureHandler(SsoSignIn.failed()))
                .authorizeHttpRequests(doors -> doors.anyRequest().permitAll())
                .build();
    }
}
