package io.lockwatch.security;

import java.io.IOException;
import java.util.Set;

import io.lockwatch.api.Problems;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * A request that may change something (any method but GET, HEAD, OPTIONS) from a page of another origin is refused
 * with a 403 before its credentials are looked at. lockwatch keeps no cookie, but a browser that holds Basic
 * credentials for Hawtio sends them with another site's form too; its {@code Origin} tells that site apart. A
 * request without an {@code Origin} (not a browser, or a browser's same-origin GET) is not a cross-site one.
 */
final class CrossSiteWrites extends OncePerRequestFilter {

    private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS");

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (!SAFE.contains(request.getMethod()) && !SameOrigin.allows(request, request.getHeader("Origin"))) {
            Problems.write(response, 403, "Forbidden", "a request that changes something is not taken from another site's page");
            return;
        }
        chain.doFilter(request, response);
    }
}
