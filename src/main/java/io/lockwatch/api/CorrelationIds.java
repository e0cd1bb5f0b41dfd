package io.lockwatch.api;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.MDC;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Gives every HTTP request a correlation id: the caller's own {@value #HEADER} if it is a plain token, else a new
 * one. The answer carries it in the same header, a 5xx also in its body, and the log lines of the request carry it
 * (MDC {@value #MDC_KEY}), so that an operator finds the failure a user reports. Camel's routes see it as a
 * request header.
 */
final class CorrelationIds extends OncePerRequestFilter {

    public static final String HEADER = "X-Correlation-Id";
    static final String MDC_KEY = "correlation_id";
    static final String ATTRIBUTE = CorrelationIds.class.getName();
    private static final Pattern PLAIN = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String given = request.getHeader(HEADER);
        String id = given != null && PLAIN.matcher(given).matches() ? given : newId();
        request.setAttribute(ATTRIBUTE, id);
        response.setHeader(HEADER, id);
        MDC.put(MDC_KEY, id);
        try {
            chain.doFilter(given == null || !given.equals(id) ? new WithId(request, id) : request, response);
        } finally {
            MDC.remove(MDC_KEY);
        }
    }

    /** Error dispatches keep the id the request was given. */
    @Override
    protected boolean shouldNotFilterErrorDispatch() {
        return true;
    }

    /** The request's id; null outside a request. */
    static String of(HttpServletRequest request) {
        Object id = request.getAttribute(ATTRIBUTE);
        return id == null ? null : id.toString();
    }

    static String newId() {
        return Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
    }

    /** The request as the routes read it: with the id as its header, in place of a missing or unusable one. */
    private static final class WithId extends HttpServletRequestWrapper {

        private final String id;

        WithId(HttpServletRequest request, String id) {
            super(request);
            this.id = id;
        }

        @Override
        public String getHeader(String name) {
            return HEADER.equalsIgnoreCase(name) ? id : super.getHeader(name);
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            return HEADER.equalsIgnoreCase(name) ? Collections.enumeration(List.of(id)) : super.getHeaders(name);
        }

        @Override
        public Enumeration<String> getHeaderNames() {
            List<String> names = new ArrayList<>();
            for (Enumeration<String> e = super.getHeaderNames(); e.hasMoreElements(); ) {
                String n = e.nextElement();
                if (!HEADER.equalsIgnoreCase(n)) {
                    names.add(n);
                }
            }
            names.add(HEADER);
            return Collections.enumeration(names);
        }
    }
}
