package io.lockwatch.security;

import java.io.IOException;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

import io.lockwatch.api.Problems;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Answers only requests addressed to one of its own host names ({@code lockwatch.http.allowed-hosts}; empty: any).
 * A page on another site can rebind its own name to 127.0.0.1 and so reach a service on the operator's loopback
 * from the operator's browser (DNS rebinding); its requests still name that site in {@code Host}, and get a 421
 * here before anything else reads them. The name is compared without its port, case aside, as the container read
 * it from {@code Host} (a request without one names the address it came in on).
 */
final class AllowedHosts extends OncePerRequestFilter {

    private final Set<String> hosts;

    AllowedHosts(List<String> hosts) {
        this.hosts = hosts.stream().map(AllowedHosts::normal).filter(h -> !h.isEmpty()).collect(Collectors.toUnmodifiableSet());
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (!hosts.isEmpty() && !hosts.contains(normal(request.getServerName()))) {
            Problems.write(response, 421, "Misdirected Request", "this service does not answer for that host name: "
                    + "it answers only those in lockwatch.http.allowed-hosts");
            return;
        }
        chain.doFilter(request, response);
    }

    /** Lower case, an IPv6 literal without its brackets, no trailing dot. */
    private static String normal(String host) {
        String h = host == null ? "" : host.trim().toLowerCase(Locale.ROOT);
        if (h.startsWith("[") && h.endsWith("]")) {
            h = h.substring(1, h.length() - 1);
        }
        return h.endsWith(".") ? h.substring(0, h.length() - 1) : h;
    }
}
