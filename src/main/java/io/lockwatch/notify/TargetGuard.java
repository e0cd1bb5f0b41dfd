package io.lockwatch.notify;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Locale;

/**
 * Keeps webhooks from being pointed at the service's own network (SSRF). A client URL must be http or https, carry
 * no credentials, and, unless private targets are allowed, reach only public addresses: not loopback, link-local
 * (the cloud metadata address among them), private, shared (CGNAT), multicast, reserved or unspecified ones, nor
 * those hidden in an IPv6 address (IPv4-mapped or -compatible, NAT64, 6to4, Teredo).
 *
 * <p>Checked three times, for three reasons: when a URL is registered, to tell its owner at once; before each
 * delivery, on its form (an address written in the URL needs no lookup); and when the poster connects: its DNS
 * resolver is {@link #connectableAddresses}, which resolves once, checks every address, and hands the poster only
 * those, so an answer that changes between a check and the connection (DNS rebinding) cannot get through.
 *
 * <p>An IPv4 address must be written as four decimal numbers. Other forms ({@code 2130706433}, {@code 0177.0.0.1},
 * {@code 0x7f.1}) mean different addresses to different software, so they are refused with the address they name.
 */
public class TargetGuard {

    /** How a host name becomes addresses; the system's resolver unless a test gives its own. */
    @FunctionalInterface
    public interface Resolver {
        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    /** Why the poster may not connect: the host resolved to an address the guard refuses. */
    public static final class Refused extends UnknownHostException {
        Refused(String reason) {
            super(reason);
        }
    }

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TargetGuard.class);

    private final boolean allowPrivate;
    /** problemWithForm's answers by URL ("" for none): they depend on the URL alone. */
    private final com.github.benmanes.caffeine.cache.Cache<String, String> formProblems = com.github.benmanes.caffeine.cache.Caffeine
            .newBuilder().maximumSize(10_000).build();
    private final Resolver resolver;

    public TargetGuard(boolean allowPrivate) {
        this(allowPrivate, InetAddress::getAllByName);
    }

    TargetGuard(boolean allowPrivate, Resolver resolver) {
        this.allowPrivate = allowPrivate;
        this.resolver = resolver;
    }

    /** At registration: the URL's form and every address its host resolves to now. @return null if it may be used, else why not */
    public String problemWith(String url) {
        String problem = problemWithForm(url);
        if (problem != null || allowPrivate) {
            return problem;
        }
        try {
            connectableAddresses(URI.create(url).getHost());
            return null;
        } catch (Refused e) {
            return e.getMessage();
        } catch (UnknownHostException e) {
            return "host " + URI.create(url).getHost() + " does not resolve";
        }
    }

    /**
     * Before a delivery: the URL's form, and an address written in it; names are checked when connecting. Asked for
     * every attempt, of the few URLs the clients have, and the answer depends on the URL alone: kept (at most 10,000
     * URLs), as parsing it each time was 15 us of a notification's CPU (issue 55).
     */
    public String problemWithForm(String url) {
        if (url == null) {
            return formProblem(null);
        }
        String problem = formProblems.get(url, u -> java.util.Objects.requireNonNullElse(formProblem(u), ""));
        return problem.isEmpty() ? null : problem;
    }

    private String formProblem(String url) {
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
        if (uri.getUserInfo() != null || (uri.getRawAuthority() != null && uri.getRawAuthority().contains("@"))) {
            return "URL must not carry credentials";
        }
        String host = uri.getHost();
        if (host == null) {
            // java.net.URI parses no host out of forms such as 127.1 or 256.1.1.1: say what is wrong with them
            String authority = uri.getRawAuthority();
            if (authority == null || authority.isBlank()) {
                return "URL has no host";
            }
            String named = authority.replaceFirst(":[0-9]*$", "");
            try {
                literal(named);
            } catch (Refused e) {
                return e.getMessage();
            }
            return "host " + named + " is not a valid host name";
        }
        InetAddress literal;
        try {
            literal = literal(host);
        } catch (Refused e) {
            return e.getMessage();
        }
        if (literal != null && !allowPrivate) {
            String kind = refusedKind(literal);
            if (kind != null) {
                return "host " + host + " is " + withArticle(kind) + " address";
            }
        }
        return null;
    }

    /**
     * The poster's resolver: the host's addresses, resolved once, each checked. The poster connects only to these.
     *
     * @throws Refused if any of them is refused (one bad answer makes the whole name suspect)
     */
    public InetAddress[] connectableAddresses(String host) throws UnknownHostException {
        InetAddress literal = literal(host);
        InetAddress[] addresses = literal != null ? new InetAddress[] {literal} : resolver.resolve(host);
        if (addresses == null || addresses.length == 0) {
            throw new UnknownHostException(host);
        }
        if (!allowPrivate) {
            for (InetAddress a : addresses) {
                String kind = refusedKind(a);
                if (kind != null) {
                    // the address to the log only: in an answer it would tell an API caller what a name resolves to
                    // inside the operator's network
                    LOG.warn("refused host {}: it resolves to {} ({})", host, a.getHostAddress(), kind);
                    throw new Refused("host " + host + " resolves to " + withArticle(kind) + " address");
                }
            }
        }
        return addresses;
    }

    /**
     * The address a host written as an IP address means, or null for a name. An IPv4 address in any form but four
     * decimal numbers is refused, naming the address it would be (read as browsers and {@code inet_aton} read it).
     */
    static InetAddress literal(String host) throws Refused {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (h.indexOf(':') >= 0) {
            if (!h.matches("[0-9A-Fa-f:.]+")) {
                throw new Refused("host " + host + " is not a valid IPv6 address");
            }
            try {
                return InetAddress.getByName(h); // a literal: no lookup
            } catch (UnknownHostException e) {
                throw new Refused("host " + host + " is not a valid IPv6 address");
            }
        }
        String name = h.endsWith(".") ? h.substring(0, h.length() - 1) : h;
        String last = name.substring(name.lastIndexOf('.') + 1);
        if (!last.matches("[0-9]+|0[xX][0-9A-Fa-f]*")) {
            return null; // a name (no top-level domain is a number)
        }
        byte[] b = ipv4(name);
        if (b == null) {
            throw new Refused("host " + host + " is not a valid IPv4 address");
        }
        InetAddress a;
        try {
            a = InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
        if (!h.equals(a.getHostAddress())) {
            String kind = refusedKind(a);
            throw new Refused("host " + host + " is the " + (kind == null ? "" : kind + " ") + "IPv4 address "
                    + a.getHostAddress() + " written in another form; write an address as four decimal numbers");
        }
        return a;
    }

    /** An IPv4 address the way the WHATWG URL standard reads one: 1 to 4 parts, each decimal, 0-octal or 0x-hex. */
    private static byte[] ipv4(String name) {
        String[] parts = name.split("\\.", -1);
        if (parts.length > 4) {
            return null;
        }
        long[] n = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            String p = parts[i];
            try {
                if (p.startsWith("0x") || p.startsWith("0X")) {
                    n[i] = p.length() == 2 ? 0 : Long.parseLong(p.substring(2), 16);
                } else if (p.length() > 1 && p.startsWith("0")) {
                    n[i] = Long.parseLong(p.substring(1), 8);
                } else {
                    n[i] = Long.parseLong(p);
                }
            } catch (NumberFormatException e) {
                return null; // empty, or not a number of its base
            }
            if (n[i] < 0 || (i < parts.length - 1 && n[i] > 255)) {
                return null;
            }
        }
        long value = n[parts.length - 1];
        if (value >= 1L << (8 * (5 - parts.length))) {
            return null;
        }
        for (int i = 0; i < parts.length - 1; i++) {
            value |= n[i] << (8 * (3 - i));
        }
        return new byte[] {(byte) (value >>> 24), (byte) (value >>> 16), (byte) (value >>> 8), (byte) value};
    }

    /** What kind of address this is if webhooks may not reach it; null for a public address. */
    static String refusedKind(InetAddress a) {
        byte[] b = a.getAddress();
        if (a instanceof Inet4Address) {
            return refusedKindV4(b);
        }
        if (a instanceof Inet6Address) {
            if (a.isLoopbackAddress()) {
                return "loopback";
            }
            if (a.isAnyLocalAddress()) {
                return "unspecified";
            }
            if (a.isLinkLocalAddress()) {
                return "link-local";
            }
            if (a.isSiteLocalAddress() || (b[0] & 0xfe) == 0xfc) { // fec0::/10, fc00::/7
                return "private";
            }
            if (a.isMulticastAddress()) {
                return "multicast";
            }
            // an IPv4 address inside: ::/96 (compatible), ::ffff:0:0/96 (mapped), 64:ff9b::/96 (NAT64), 6to4, Teredo
            if (allZero(b, 0, 10) && ((b[10] == 0 && b[11] == 0) || (b[10] == (byte) 0xff && b[11] == (byte) 0xff))
                    || b[0] == 0 && b[1] == 0x64 && b[2] == (byte) 0xff && b[3] == (byte) 0x9b && allZero(b, 4, 12)) {
                return embedded(b, 12, 0);
            }
            if (b[0] == 0x20 && b[1] == 0x02) { // 2002:V4ADDR::/48
                return embedded(b, 2, 0);
            }
            if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0) { // Teredo: the client's address, inverted
                return embedded(b, 12, 0xff);
            }
            return null;
        }
        return "unknown kind of";
    }

    private static String embedded(byte[] b, int from, int xor) {
        byte[] v4 = new byte[4];
        for (int i = 0; i < 4; i++) {
            v4[i] = (byte) (b[from + i] ^ xor);
        }
        String kind = refusedKindV4(v4);
        return kind == null ? null : kind + " IPv4";
    }

    private static String refusedKindV4(byte[] b) {
        int o0 = b[0] & 0xff;
        int o1 = b[1] & 0xff;
        if (o0 == 127) {
            return "loopback";
        }
        if (o0 == 0) {
            return "unspecified";
        }
        if (o0 == 169 && o1 == 254) {
            return "link-local"; // 169.254.169.254: the cloud metadata service
        }
        if (o0 == 10 || (o0 == 172 && (o1 & 0xf0) == 16) || (o0 == 192 && o1 == 168)) {
            return "private";
        }
        if (o0 == 100 && (o1 & 0xc0) == 64) {
            return "shared (carrier-grade NAT)"; // 100.64.0.0/10, where some clouds keep their metadata service
        }
        if ((o0 == 192 && o1 == 0 && (b[2] & 0xff) == 0) || (o0 == 198 && (o1 & 0xfe) == 18)) {
            return "reserved"; // 192.0.0.0/24 (protocol assignments), 198.18.0.0/15 (benchmarking)
        }
        if (o0 >= 224 && o0 < 240) {
            return "multicast";
        }
        if (o0 >= 240) {
            return "reserved"; // 240.0.0.0/4 and the broadcast address
        }
        return null;
    }

    private static String withArticle(String kind) {
        return ("aeiou".indexOf(kind.charAt(0)) >= 0 ? "an " : "a ") + kind;
    }

    private static boolean allZero(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }
}
