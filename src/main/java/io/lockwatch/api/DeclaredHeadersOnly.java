package io.lockwatch.api;

import java.io.IOException;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * The API's entry, last before Camel: what the routes see of a request.
 * <ul>
 * <li>Only the request headers the routes may read: HTTP's own that the service speaks, and those the contract
 * declares as header parameters. Camel copies every request header into the exchange beside the query and path
 * parameters, under the same names, so a header {@code client_id} or {@code gatewayId} was read as if it were that
 * parameter (issue 54). Filtered here, no route can be steered by a header, whatever name it reads.</li>
 * <li>{@code HEAD} as {@code GET} (RFC 9110, 9.3.2): the same answer, whose body Tomcat does not send for a HEAD.
 * The security chain, before this, has already let it in as a read. A long poll is not held for a HEAD (the feed's
 * hold, {@link FeedLongPoll}, comes before this and holds only a GET): it is answered at once.</li>
 * </ul>
 */
final class DeclaredHeadersOnly extends OncePerRequestFilter {

    /**
     * HTTP's headers the API reads (the contract's media types, the caller, the body's framing, the caller's
     * correlation id, a trace's context): none is a parameter's name.
     */
    static final Set<String> PROTOCOL = Set.of("accept", "authorization", "content-type", "content-length",
            "content-encoding", "transfer-encoding", "host", "origin", "connection", "expect",
            CorrelationIds.HEADER.toLowerCase(Locale.ROOT), "traceparent", "tracestate", "baggage");

    private final Set<String> readable;

    /** @param declared the contract's header parameters (ApiDocument#headerParameters) */
    DeclaredHeadersOnly(Set<String> declared) {
        Set<String> names = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        names.addAll(PROTOCOL);
        names.addAll(declared);
        this.readable = Collections.unmodifiableSet(names);
    }

    /** Camel's answer may come on an async dispatch: it sees the same request. */
    @Override
    protected boolean shouldNotFilterAsyncDispatch() {
        return false;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        chain.doFilter(new Readable(request, readable), response);
    }

    private static final class Readable extends HttpServletRequestWrapper {
        private final Set<String> readable;
        private final boolean head;

        Readable(HttpServletRequest request, Set<String> readable) {
            super(request);
            this.readable = readable;
            this.head = "HEAD".equals(request.getMethod());
        }

        @Override
        public String getMethod() {
            return head ? "GET" : super.getMethod();
        }

        @Override
        public String getHeader(String name) {
            return readable.contains(name) ? super.getHeader(name) : null;
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            return readable.contains(name) ? super.getHeaders(name) : Collections.emptyEnumeration();
        }

        @Override
        public Enumeration<String> getHeaderNames() {
            return Collections.enumeration(Collections.list(super.getHeaderNames()).stream()
                    .filter(readable::contains).toList());
        }

        @Override
        public long getDateHeader(String name) {
            return readable.contains(name) ? super.getDateHeader(name) : -1;
        }

        @Override
        public int getIntHeader(String name) {
            return readable.contains(name) ? super.getIntHeader(name) : -1;
        }
    }
}
