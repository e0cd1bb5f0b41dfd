package io.lockwatch.security;

import jakarta.servlet.DispatcherType;
import org.jolokia.server.core.service.api.Restrictor;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.authentication.AnonymousAuthenticationFilter;
import org.springframework.security.web.authentication.AuthenticationEntryPointFailureHandler;
import org.springframework.security.web.authentication.AuthenticationFilter;
import org.springframework.security.web.servlet.util.matcher.PathPatternRequestMatcher;

/**
 * Who may open which door, decided by Spring Security on the path the container routes on (decoded, with
 * {@code ;} parameters gone), after its strict firewall has refused every path that is not in normal form.
 * Deny by default: only health and the Prometheus scrape answer without a token; reading needs a read or a full
 * token; everything else needs a full token; a client's key reaches only the API, which holds it to its client (the
 * actuator, health included, is 403 for it); Jolokia's operations are decided by {@link JolokiaPolicy}. The
 * permissions matrix of docs/security.md is this method in a table.
 */
@Configuration(proxyBeanMethods = false)
@EnableWebSecurity
@EnableConfigurationProperties({TokenProperties.class, SsoProperties.class, ManagementProperties.class})
class SecurityConfiguration {

    private static final String READ = Caller.READ_ROLE, FULL = Caller.FULL_ROLE, DEVICE = Caller.DEVICE_ROLE,
            CLIENT = Caller.CLIENT_ROLE;

    /**
     * No observation of each security filter, authentication and authorisation: a pulling client's every answer is a
     * new request, and these were a seventh of the request threads' CPU in the feed benchmark, for metrics and spans
     * nobody reads. The request itself is still observed (http.server.requests, and its span when tracing).
     */
    @Bean
    org.springframework.security.config.observation.SecurityObservationSettings securityObservations() {
        return org.springframework.security.config.observation.SecurityObservationSettings.noObservations();
    }

    /** Static: it changes bean definitions, before any bean of this configuration is made. */
    @Bean
    static NoHandlerLookupBeforeSecurity noHandlerLookupBeforeSecurity() {
        return new NoHandlerLookupBeforeSecurity();
    }

    @Bean
    SecurityFilterChain doors(HttpSecurity http, TokenAuthentication tokens, ProblemResponses problems,
                              @org.springframework.beans.factory.annotation.Value("${lockwatch.devices.broker-auth-networks:}")
                              java.util.List<String> brokerNetworks) throws Exception {
        AuthenticationFilter authentication = new AuthenticationFilter(tokens, tokens);
        authentication.setSuccessHandler((request, response, auth) -> {
            // go on to the door asked for; a device's login goes with the request, for the API to hold it to its sensors
            if (auth.getAuthorities().containsAll(Caller.DEVICE.authorities())) {
                request.setAttribute(io.lockwatch.devices.DeviceLogin.REQUEST_ATTRIBUTE, auth.getName());
            }
            request.setAttribute(CallerAttributes.NAME, auth.getName());
            request.setAttribute(CallerAttributes.KIND, kind(auth));
            request.setAttribute(CallerAttributes.OPERATOR, auth.getAuthorities().containsAll(Caller.FULL.authorities()));
            if (auth.getDetails() instanceof SsoTokens.Person person) {
                request.setAttribute(CallerAttributes.SUBJECT, person.subject());
            }
            // and a client's key, for the API to hold it to its client (ClientScope)
            if (auth.getDetails() instanceof io.lockwatch.selfservice.ClientKeys.Holder holder) {
                request.setAttribute(io.lockwatch.selfservice.ClientKeys.REQUEST_ATTRIBUTE, holder);
            }
        });
        AuthenticationEntryPointFailureHandler failure = new AuthenticationEntryPointFailureHandler(problems);
        // a credential that cannot be checked now (the registry or the identity provider away) is the entry point's
        // 503, not an exception out of the chain (a 500)
        failure.setRethrowAuthenticationServiceException(false);
        authentication.setFailureHandler(failure);
        PathPatternRequestMatcher.Builder path = PathPatternRequestMatcher.withDefaults();

        return http
                // tokens, not cookies: nothing for a cross-site request to ride on but a browser's Basic
                // credentials, which only Hawtio and Jolokia take, and CrossSiteWrites refuses any write from
                // another origin
                .csrf(csrf -> csrf.disable())
                // the security headers are written before the request goes on, not as it comes back: the API answers
                // on Camel's threads (platform-http), which commit the answer while the request's own thread may still
                // be on its way back through the filters, and the two writing the headers at once broke Tomcat's list
                // of them (a connection closed without an answer)
                .headers(headers -> headers.addObjectPostProcessor(
                        new org.springframework.security.config.ObjectPostProcessor<org.springframework.security.web.header.HeaderWriterFilter>() {
                            @Override
                            public <O extends org.springframework.security.web.header.HeaderWriterFilter> O postProcess(O filter) {
                                filter.setShouldWriteHeadersEagerly(true);
                                return filter;
                            }
                        }))
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .requestCache(cache -> cache.disable())
                // nothing to log out of: no session
                .logout(logout -> logout.disable())
                .addFilterBefore(new CrossSiteWrites(), AnonymousAuthenticationFilter.class)
                .addFilterBefore(authentication, AnonymousAuthenticationFilter.class)
                .exceptionHandling(e -> e.authenticationEntryPoint(problems).accessDeniedHandler(problems))
                .authorizeHttpRequests(doors -> doors
                        // the error page of a request that was let in
                        .dispatcherTypeMatchers(DispatcherType.ERROR).permitAll()
                        // a client's key is the client's, not the operator's: none of the actuator is for it, not
                        // even health's status (its details name the database, the broker's version, the disk)
                        .requestMatchers(clientKeyOn(path.matcher("/actuator"), path.matcher("/actuator/**"))).denyAll()
                        .requestMatchers(path.matcher(HttpMethod.GET, "/actuator/health"),
                                path.matcher(HttpMethod.GET, "/actuator/health/liveness"),
                                path.matcher(HttpMethod.GET, "/actuator/health/readiness"),
                                path.matcher(HttpMethod.GET, "/actuator/prometheus")).permitAll()
                        // the console's page and scripts: static, and they hold nothing; what it shows comes from the
                        // API with the operator's token
                        .requestMatchers(path.matcher(HttpMethod.GET, "/console"), path.matcher(HttpMethod.GET, "/console/"),
                                path.matcher(HttpMethod.GET, "/console/index.html"),
                                path.matcher(HttpMethod.GET, "/console/console.js"),
                                path.matcher(HttpMethod.GET, "/console/console.css"),
                                path.matcher(HttpMethod.GET, "/console/signed-in.js")).permitAll()
                        // the API reference's page, script and Redoc's bundle: static, holding nothing; the contract it
                        // renders comes from /api/v1/openapi.json with the reader's token
                        .requestMatchers(path.matcher(HttpMethod.GET, "/api/docs"),
                                path.matcher(HttpMethod.GET, "/api/docs/index.html"),
                                path.matcher(HttpMethod.GET, "/api/docs/docs.js"),
                                path.matcher(HttpMethod.GET, "/webjars/redoc/*/bundles/redoc.standalone.js")).permitAll()
                        // RabbitMQ's HTTP auth backend, which sends no token: its networks only
                        .requestMatchers(path.matcher(HttpMethod.POST, "/broker-auth/*")).access(fromNetworks(brokerNetworks))
                        // a portal link is exchanged for a session by whoever holds it: the link is the credential
                        .requestMatchers(path.matcher(HttpMethod.POST, "/api/v1/portal/sessions")).permitAll()
                        // a device posts readings of its own sensors with its credential (ReadingsApi holds it to them)
                        .requestMatchers(path.matcher(HttpMethod.POST, "/api/v1/readings"),
                                path.matcher(HttpMethod.POST, "/api/v1/adapters/the-things-stack/uplinks"))
                        .hasAnyRole(FULL, DEVICE)
                        // a client's key reaches the API, where each operation admits it to its own client's
                        // resources or answers 404 (ClientScope, by the roles the contract gives each operation)
                        .requestMatchers(path.matcher(HttpMethod.GET, "/api/v1/**"), path.matcher(HttpMethod.HEAD, "/api/v1/**"))
                        .hasAnyRole(READ, CLIENT)
                        .requestMatchers(path.matcher("/api/v1/**")).hasAnyRole(FULL, CLIENT)
                        // Hawtio posts its reads too: what each token may do there is JolokiaPolicy's to say
                        .requestMatchers(path.matcher("/actuator/jolokia/**"), path.matcher("/actuator/hawtio/jolokia/**"))
                        .hasRole(READ)
                        .requestMatchers(path.matcher(HttpMethod.GET, "/**"), path.matcher(HttpMethod.HEAD, "/**")).hasRole(READ)
                        .anyRequest().hasRole(FULL))
                .build();
    }

    /** What kind of caller the audit log and the API name. */
    private static String kind(org.springframework.security.core.Authentication auth) {
        if (auth.getDetails() instanceof SsoTokens.Person) {
            return "person";
        }
        if (auth.getDetails() instanceof io.lockwatch.selfservice.ClientKeys.Holder) {
            return "client-key";
        }
        if (auth.getAuthorities().containsAll(Caller.DEVICE.authorities())) {
            return "device";
        }
        return auth.getAuthorities().containsAll(Caller.FULL.authorities()) ? "full-token" : "read-token";
    }

    /** A request on one of these paths with a client's key (the authentication's success handler has named it). */
    private static org.springframework.security.web.util.matcher.RequestMatcher clientKeyOn(
            org.springframework.security.web.util.matcher.RequestMatcher... paths) {
        return request -> request.getAttribute(io.lockwatch.selfservice.ClientKeys.REQUEST_ATTRIBUTE) != null
                && java.util.Arrays.stream(paths).anyMatch(p -> p.matches(request));
    }

    /** A request from one of these networks (CIDR, IPv4 or IPv6), by its peer's address: no header is believed. */
    static org.springframework.security.authorization.AuthorizationManager<
            org.springframework.security.web.access.intercept.RequestAuthorizationContext> fromNetworks(java.util.List<String> networks) {
        java.util.List<org.springframework.security.web.util.matcher.IpAddressMatcher> matchers = networks.stream()
                .filter(n -> !n.isBlank()).map(n -> new org.springframework.security.web.util.matcher.IpAddressMatcher(n.trim())).toList();
        return (authentication, context) -> new org.springframework.security.authorization.AuthorizationDecision(
                matchers.stream().anyMatch(m -> m.matches(context.getRequest())));
    }

    @Bean
    SignIns signIns(org.springframework.jdbc.core.JdbcTemplate jdbc) {
        return new SignIns(jdbc);
    }

    /** Also the answer to a path the firewall refuses, as the one {@code RequestRejectedHandler} bean. */
    @Bean
    ProblemResponses problemResponses() {
        return new ProblemResponses();
    }

    /** The one way in; being an {@code AuthenticationManager} bean, it keeps Boot from inventing a user. */
    @Bean
    TokenAuthentication tokenAuthentication(TokenProperties props, SsoProperties sso, SignIns signIns,
                                            io.lockwatch.devices.Devices devices, io.lockwatch.selfservice.ClientKeys clientKeys) {
        if (!sso.enabled() && props.all().stream().noneMatch(TokenProperties.Named::full)) {
            throw new IllegalStateException("no API token configured: set lockwatch.api.tokens (LOCKWATCH_API_TOKENS), "
                    + "or an identity provider (lockwatch.sso.issuer) for people to sign in at");
        }
        return new TokenAuthentication(props, devices::authenticate, clientKeys::authenticate, new SsoTokens(sso, signIns));
    }


    /** Right after the correlation id's (its refusal has an id too): a request for another host name is nobody's to read. */
    @Bean
    FilterRegistrationBean<AllowedHosts> allowedHosts(
            @org.springframework.beans.factory.annotation.Value("${lockwatch.http.allowed-hosts:}") java.util.List<String> hosts) {
        FilterRegistrationBean<AllowedHosts> filter = new FilterRegistrationBean<>(new AllowedHosts(hosts));
        filter.setOrder(Ordered.HIGHEST_PRECEDENCE + 1);
        return filter;
    }

    /**
     * Ahead of every other filter but the correlation id's and the host names', Spring Security's own included: they
     * parse the path it vouches for.
     */
    @Bean
    FilterRegistrationBean<NormalFormFilter> normalFormFilter(ProblemResponses problems) {
        FilterRegistrationBean<NormalFormFilter> filter = new FilterRegistrationBean<>(new NormalFormFilter(problems));
        filter.setOrder(Ordered.HIGHEST_PRECEDENCE + 2);
        return filter;
    }

    /** On Jolokia's own path: Hawtio's requests are forwarded there, so forwards pass it too. */
    @Bean
    FilterRegistrationBean<JolokiaRequestTypes> jolokiaRequestTypes() {
        FilterRegistrationBean<JolokiaRequestTypes> filter = new FilterRegistrationBean<>(new JolokiaRequestTypes());
        filter.addUrlPatterns("/actuator/jolokia/*");
        filter.setDispatcherTypes(DispatcherType.REQUEST, DispatcherType.FORWARD);
        return filter;
    }

    /** Found by Jolokia's servlet among the application's beans. */
    @Bean
    Restrictor jolokiaPolicy(ManagementProperties props) {
        return new JolokiaPolicy(props);
    }
}
