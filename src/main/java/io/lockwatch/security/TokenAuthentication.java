package io.lockwatch.security;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;

import jakarta.servlet.http.HttpServletRequest;
import io.lockwatch.selfservice.ClientKeys;
import org.springframework.security.authentication.AuthenticationManager;
import org.springframework.security.authentication.AuthenticationServiceException;
import org.springframework.security.authentication.BadCredentialsException;
import org.springframework.security.authentication.UsernamePasswordAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.web.authentication.AuthenticationConverter;

/**
 * Reads a token from {@code Authorization: Bearer <token>}, or, on Hawtio's and Jolokia's paths only, from HTTP Basic
 * with any user name and the token as password (what a browser opening Hawtio sends), and tells whose it is: an
 * operator's full or read token, or a client's key ({@code lwc_…}, looked up in the registry). On
 * {@code POST /api/v1/readings} and The Things Stack's webhook of uplinks alone, HTTP Basic is a device's own login
 * and secret instead (a gateway's, for the webhook), checked by the registry. A
 * JWT, where an identity provider is set, is a person's ({@link SsoTokens}). Tokens are compared in constant time
 * against every configured one, and never logged: the principal is named by the token's name or its place in the list.
 */
final class TokenAuthentication implements AuthenticationConverter, AuthenticationManager, Bearers {

    private final List<TokenProperties.Named> tokens;
    private final List<byte[]> tokenBytes;
    private final java.util.function.BiPredicate<String, String> devices;
    private final java.util.function.Function<String, ClientKeys.Holder> clientKeys;
    private final SsoTokens sso;

    TokenAuthentication(TokenProperties props) {
        this(props, (login, secret) -> false, token -> null, new SsoTokens(new SsoProperties(null, null, null, null, null, null, null, null, null, null), null));
    }

    /**
     * @param devices    whether a device's login and secret are those of a live credential
     * @param clientKeys who holds a client key, if it is a live one
     * @param sso        people's tokens from the identity provider, where one is set
     */
    TokenAuthentication(TokenProperties props, java.util.function.BiPredicate<String, String> devices,
                        java.util.function.Function<String, ClientKeys.Holder> clientKeys, SsoTokens sso) {
        this.devices = devices;
        this.clientKeys = clientKeys;
        this.sso = sso;
        this.tokens = props.all();
        this.tokenBytes = tokens.stream().map(t -> t.token().getBytes(StandardCharsets.UTF_8)).toList();
    }

    /** Null when the request presents no credentials at all: it is then anonymous, and the rules decide. */
    @Override
    public Authentication convert(HttpServletRequest request) {
        String authorization = request.getHeader("Authorization");
        if (authorization == null) {
            return null;
        }
        if (authorization.regionMatches(true, 0, "Basic ", 0, 6) && readingsPost(request)) {
            // a device's credential: its login as user name, its secret as password
            String[] basic = basic(authorization);
            if (basic == null || io.lockwatch.devices.DeviceLogin.parse(basic[0]) == null) {
                throw new BadCredentialsException("HTTP Basic here is a device's credential: its login (sensor.<id> or "
                        + "gateway.<id>) and its secret");
            }
            return UsernamePasswordAuthenticationToken.unauthenticated(basic[0], basic[1]);
        }
        if (authorization.regionMatches(true, 0, "Basic ", 0, 6) && !browserConsole(request)) {
            // a browser keeps Basic credentials and sends them on, another site's forms included: only the consoles
            // a browser opens take them; elsewhere the request is anonymous, so an open door still opens
            return null;
        }
        String token = token(authorization);
        if (token == null) {
            throw new BadCredentialsException("the Authorization header holds neither a bearer token nor Basic credentials");
        }
        return UsernamePasswordAuthenticationToken.unauthenticated(null, token);
    }

    @Override
    public Authentication authenticate(Authentication presented) {
        if (presented.getPrincipal() instanceof String login) {
            if (devices.test(login, String.valueOf(presented.getCredentials()))) {
                return UsernamePasswordAuthenticationToken.authenticated(login, null, Caller.DEVICE.authorities());
            }
            throw new BadCredentialsException("not a live credential of " + login);
        }
        String presentedToken = String.valueOf(presented.getCredentials());
        if (ClientKeys.looksLikeOne(presentedToken)) {
            ClientKeys.Holder holder;
            try {
                holder = clientKeys.apply(presentedToken);
            } catch (org.springframework.dao.DataAccessException e) {
                throw new AuthenticationServiceException("client keys cannot be checked now", e);
            }
            if (holder == null) {
                throw new BadCredentialsException("not a live client key");
            }
            UsernamePasswordAuthenticationToken client = UsernamePasswordAuthenticationToken.authenticated(
                    "client-key-" + holder.keyId(), null, holder.admin() ? Caller.CLIENT_ADMIN.authorities()
                            : Caller.CLIENT_READ.authorities());
            client.setDetails(holder);
            return client;
        }
        if (sso.enabled() && SsoTokens.looksLikeOne(presentedToken)) {
            return sso.authenticate(presentedToken);
        }
        int at = indexOf(presentedToken.getBytes(StandardCharsets.UTF_8), tokenBytes);
        if (at >= 0) {
            TokenProperties.Named named = tokens.get(at);
            return UsernamePasswordAuthenticationToken.authenticated(named.name(), null,
                    (named.full() ? Caller.FULL : Caller.READ).authorities());
        }
        throw new BadCredentialsException("a valid bearer token is required");
    }

    /** Only a bearer token: a door outside the chain takes neither a device's credential nor a browser's Basic one. */
    @Override
    public Bearer who(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        try {
            Authentication caller = authenticate(UsernamePasswordAuthenticationToken.unauthenticated(null,
                    authorization.substring(7).trim()));
            return new Bearer(caller.getName(), caller.getDetails() instanceof ClientKeys.Holder holder ? holder : null);
        } catch (BadCredentialsException e) {
            return null;
        }
    }

    /** Hawtio and Jolokia, the doors a browser opens with Basic credentials (the path is in normal form here). */
    static boolean browserConsole(HttpServletRequest request) {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        return path.equals("/actuator/hawtio") || path.startsWith("/actuator/hawtio/")
                || path.equals("/actuator/jolokia") || path.startsWith("/actuator/jolokia/");
    }

    /**
     * Where a device may post its readings with its own credential: the readings, and The Things Stack's webhook of
     * uplinks, which holds a gateway's credential for the application's devices.
     */
    static boolean readingsPost(HttpServletRequest request) {
        if (!"POST".equals(request.getMethod())) {
            return false;
        }
        String path = request.getRequestURI().substring(request.getContextPath().length());
        return path.equals("/api/v1/readings") || path.equals("/api/v1/adapters/the-things-stack/uplinks");
    }

    private static String token(String authorization) {
        if (authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return authorization.substring(7).trim();
        }
        String[] basic = basic(authorization);
        return basic == null ? null : basic[1];
    }

    /** User name and password of HTTP Basic credentials, or null. */
    private static String[] basic(String authorization) {
        if (!authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
            return null;
        }
        try {
            String decoded = new String(Base64.getDecoder().decode(authorization.substring(6).trim()), StandardCharsets.UTF_8);
            int colon = decoded.indexOf(':');
            return colon < 0 ? null : new String[] {decoded.substring(0, colon), decoded.substring(colon + 1)};
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Looks at every token whatever matches, so the time taken does not tell which one (or how much of it) did. */
    private static int indexOf(byte[] token, List<byte[]> tokens) {
        int found = -1;
        for (int i = 0; i < tokens.size(); i++) {
            if (MessageDigest.isEqual(token, tokens.get(i)) && found < 0) {
                found = i;
            }
        }
        return found;
    }
}
