package io.lockwatch.notify;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Locale;

/**
 * Keeps webhooks from being pointed at the service's own network (SSRF): a client URL must be http or https
 * and, unless private targets are allowed, must not resolve to a loopback, link-local, private (site-local or
 * unique-local), multicast or unspecified address. Checked when a URL is registered and again at each
 * delivery, since DNS may change in between.
 */
public class TargetGuard {

    private final boolean allowPrivate;

    public TargetGuard(boolean allowPrivate) {
        this.allowPrivate = allowPrivate;
    }

    /** @return null if the URL may be used, else why not */
    public String problemWith(String url) {
        URI uri;
        try {
            uri = new URI(url);
        } catch (Exception e) {
            return "not a valid URL";
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            return "scheme must be http or https";
        }
        if (uri.getHost() == null || uri.getHost().isBlank()) {
            return "URL has no host";
        }
        if (uri.getUserInfo() != null) {
            return "URL must not carry credentials";
        }
        if (allowPrivate) {
            return null;
        }
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(uri.getHost());
        } catch (UnknownHostException e) {
            return "host " + uri.getHost() + " does not resolve";
        }
        for (InetAddress a : addresses) {
            if (a.isLoopbackAddress() || a.isLinkLocalAddress() || a.isSiteLocalAddress() || a.isAnyLocalAddress()
                    || a.isMulticastAddress() || isUniqueLocal(a) || isCarrierGradeNat(a)) {
                return "host " + uri.getHost() + " resolves to a private address (" + a.getHostAddress() + ")";
            }
        }
        return null;
    }

    private static boolean isUniqueLocal(InetAddress a) {
        return a instanceof Inet6Address && (a.getAddress()[0] & 0xfe) == 0xfc; // fc00::/7
    }

    private static boolean isCarrierGradeNat(InetAddress a) {
        byte[] b = a.getAddress();
        return b.length == 4 && (b[0] & 0xff) == 100 && (b[1] & 0xc0) == 64; // 100.64.0.0/10
    }
}
