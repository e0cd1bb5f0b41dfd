package io.lockwatch.api;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Every {@code /api/v1} operation, Hawtio and Jolokia need a token: {@code Authorization: Bearer <token>}, or,
 * for a browser opening Hawtio, HTTP Basic with any user name and the token as password. A read-only token may
 * only GET (and HEAD); anything else is 403. Tokens are compared in constant time and never logged.
 */
public class ApiSecurityFilter extends OncePerRequestFilter {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> READ_METHODS = Set.of("GET", "HEAD", "OPTIONS");

    private final List<byte[]> fullTokens;
    private final List<byte[]> readTokens;

    public ApiSecurityFilter(ApiProperties props) {
        this.fullTokens = props.tokens().stream().map(t -> t.getBytes(StandardCharsets.UTF_8)).toList();
        this.readTokens = props.readTokens().stream().map(t -> t.getBytes(StandardCharsets.UTF_8)).toList();
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        return !(path.startsWith("/api/") || path.startsWith("/actuator/hawtio") || path.startsWith("/actuator/jolokia")
                || path.startsWith("/hawtio") || path.startsWith("/jolokia"));
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        byte[] token = token(request.getHeader("Authorization"));
        if (token == null || !(matches(token, fullTokens) || matches(token, readTokens))) {
            boolean browser = !request.getRequestURI().contains("/api/");
            if (browser) {
                response.setHeader("WWW-Authenticate", "Basic realm=\"lockwatch\"");
            } else {
                response.setHeader("WWW-Authenticate", "Bearer realm=\"lockwatch\"");
            }
            problem(response, 401, "Unauthorized", "a valid bearer token is required");
            return;
        }
        if (!matches(token, fullTokens) && !READ_METHODS.contains(request.getMethod())) {
            problem(response, 403, "Forbidden", "this token may only read");
            return;
        }
        chain.doFilter(request, response);
    }

    private static byte[] token(String authorization) {
        if (authorization == null) {
            return null;
        }
        if (authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return authorization.substring(7).trim().getBytes(StandardCharsets.UTF_8);
        }
        if (authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
            try {
                String decoded = new String(Base64.getDecoder().decode(authorization.substring(6).trim()), StandardCharsets.UTF_8);
                int colon = decoded.indexOf(':');
                return colon < 0 ? null : decoded.substring(colon + 1).getBytes(StandardCharsets.UTF_8);
            } catch (IllegalArgumentException e) {
                return null;
            }
        }
        return null;
    }

    private static boolean matches(byte[] token, List<byte[]> tokens) {
        boolean found = false;
        for (byte[] t : tokens) {
            found |= MessageDigest.isEqual(token, t);
        }
        return found;
    }

    static void problem(HttpServletResponse response, int status, String title, String detail) throws IOException {
        response.setStatus(status);
        response.setContentType(Problems.CONTENT_TYPE);
        response.getOutputStream().write(JSON.writeValueAsBytes(Problems.body(status, title, detail, null)));
    }
}
