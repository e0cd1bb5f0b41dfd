package io.lockwatch.security;

import java.net.URI;
import java.util.Locale;

import jakarta.servlet.http.HttpServletRequest;

/**
 * Whether a browser's {@code Origin} names the host the request was sent to. A browser that holds Basic
 * credentials for lockwatch attaches them to a form another site posts here; such a post carries that site's
 * origin, and is refused.
 */
final class SameOrigin {

    private SameOrigin() {
    }

    /** True for no origin at all (not a browser, or a same-origin GET) and for this host's own. */
    static boolean allows(HttpServletRequest request, String origin) {
        if (origin == null) {
            return true;
        }
        String host = request.getHeader("Host");
        if (host == null || origin.isBlank() || "null".equals(origin)) {
            return false;
        }
        try {
            URI from = URI.create(origin.trim());
            URI to = URI.create(from.getScheme() + "://" + host.trim());
            return from.getHost() != null && from.getHost().toLowerCase(Locale.ROOT).equals(to.getHost() == null ? null
                    : to.getHost().toLowerCase(Locale.ROOT)) && port(from) == port(to);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static int port(URI uri) {
        if (uri.getPort() >= 0) {
            return uri.getPort();
        }
        return "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }
}
