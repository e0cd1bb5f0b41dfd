package io.lockwatch.security;

import java.io.IOException;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.security.web.firewall.RequestRejectedException;
import org.springframework.security.web.firewall.StrictHttpFirewall;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Refuses, before anything else reads it, a path whose text differs from what the container routes on: Spring
 * Security's strict firewall (no {@code ;} parameters, {@code //}, {@code /./}, {@code /../}, encoded {@code /},
 * {@code .} or {@code %}), and no percent-encoded letter, digit, {@code -}, {@code _} or {@code ~}, which no client
 * needs to encode (RFC 3986, 2.3). After this the raw path and the decoded one name the same servlet, which
 * Spring's own path parsing and every rule of {@link SecurityConfiguration} take for granted.
 */
final class NormalFormFilter extends OncePerRequestFilter {

    private final StrictHttpFirewall firewall = new StrictHttpFirewall();
    private final ProblemResponses problems;

    NormalFormFilter(ProblemResponses problems) {
        this.problems = problems;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        try {
            firewall.getFirewalledRequest(request);
            if (encodesAnUnreservedCharacter(request.getRequestURI())) {
                throw new RequestRejectedException("the path percent-encodes a character that needs no encoding");
            }
        } catch (RequestRejectedException e) {
            problems.handle(request, response, e);
            return;
        }
        chain.doFilter(request, response);
    }

    static boolean encodesAnUnreservedCharacter(String rawPath) {
        for (int i = rawPath.indexOf('%'); i >= 0 && i + 2 < rawPath.length(); i = rawPath.indexOf('%', i + 1)) {
            int c = Character.digit(rawPath.charAt(i + 1), 16) * 16 + Character.digit(rawPath.charAt(i + 2), 16);
            if (c >= 0 && (Character.isLetterOrDigit(c) && c < 128 || c == '-' || c == '.' || c == '_' || c == '~')) {
                return true;
            }
        }
        return false;
    }
}
