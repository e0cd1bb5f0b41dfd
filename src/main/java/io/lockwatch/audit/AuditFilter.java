package io.lockwatch.audit;

import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.api.ApiDocument;
import io.lockwatch.security.CallerAttributes;
import io.lockwatch.selfservice.ClientKeys;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.http.server.PathContainer;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ContentCachingRequestWrapper;
import org.springframework.web.util.ContentCachingResponseWrapper;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * Records every change made over HTTP, and every attempt at one, once its answer is known: an operation of the API
 * that is not a GET (readings excepted: they are the devices' data, not a change of lockwatch), a Jolokia exec or
 * write (Hawtio's included), any other write to the actuator (a logger's level), and the identity provider's
 * back-channel logouts. It wraps Spring Security's
 * chain, so that a 401 or 403 is recorded too, with the caller the chain named (or {@code anonymous}). The request's
 * JSON fields are kept, redacted ({@link Redaction}); a portal link's body, the credential, and an import's file are
 * not.
 */
final class AuditFilter extends OncePerRequestFilter {

    /** What of a request's body is looked at; a change's JSON is far smaller, an import's file is not read for this. */
    static final int BODY_KEPT = 64 * 1024;
    private static final String API = "/api/v1";
    private static final Set<String> CHANGES = Set.of("POST", "PUT", "PATCH", "DELETE");
    /** Not changes of lockwatch (readings), or whose body is not for the log (the link is a credential; a file). */
    private static final Set<String> NOT_AUDITED = Set.of("postReadings", "postTheThingsStackUplink");
    private static final Set<String> BODY_NOT_KEPT = Set.of("openPortalSession", "importRegistry");
    private static final ObjectMapper JSON = new ObjectMapper();

    private record Endpoint(String method, PathPattern pattern, String operationId) {
    }

    /** What a request is, for the log: the operation, and what it is done to. */
    private record Change(String operation, String resource, boolean keepBody, boolean jolokiaPost) {
    }

    private final List<Endpoint> endpoints = new ArrayList<>();
    private final Recorder recorder;
    private final Clock clock;

    AuditFilter(ApiDocument contract, Recorder recorder, Clock clock) {
        this.recorder = recorder;
        this.clock = clock;
        PathPatternParser parser = new PathPatternParser();
        for (ApiDocument.Endpoint e : contract.endpoints()) {
            if (CHANGES.contains(e.method()) && !NOT_AUDITED.contains(e.operationId())) {
                endpoints.add(new Endpoint(e.method(), parser.parse(API + e.path()), e.operationId()));
            }
        }
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (isAsyncDispatch(request)) {
            // the API answers on Camel's threads: its answer is written, held in the wrapper, and sent from here
            Pending pending = (Pending) request.getAttribute(PENDING);
            request.removeAttribute(PENDING);
            boolean failed = true;
            try {
                chain.doFilter(request, response);
                failed = false;
            } finally {
                if (pending != null) {
                    pending.finish(failed);
                }
            }
            return;
        }
        Change change = change(request);
        if (change == null) {
            chain.doFilter(request, response);
            return;
        }
        // the answer is held until its entry is recorded: whoever has the answer finds the entry
        Pending pending = new Pending(change, change.keepBody() || change.jolokiaPost()
                ? new ContentCachingRequestWrapper(request, BODY_KEPT) : request, new ContentCachingResponseWrapper(response));
        boolean failed = true;
        try {
            chain.doFilter(pending.request, pending.response);
            failed = false;
        } finally {
            if (!failed && pending.request.isAsyncStarted()) {
                request.setAttribute(PENDING, pending);
                pending.request.getAsyncContext().addListener(pending);
            } else {
                pending.finish(failed);
            }
        }
    }

    @Override
    protected boolean shouldNotFilterAsyncDispatch() {
        return false;
    }

    private static final String PENDING = AuditFilter.class.getName() + ".pending";

    /** A change whose answer is being written; finished once, by the async dispatch or, failing that, its completion. */
    private final class Pending implements AsyncListener {
        final Change change;
        final HttpServletRequest request;
        final ContentCachingResponseWrapper response;
        private final java.util.concurrent.atomic.AtomicBoolean finished = new java.util.concurrent.atomic.AtomicBoolean();

        Pending(Change change, HttpServletRequest request, ContentCachingResponseWrapper response) {
            this.change = change;
            this.request = request;
            this.response = response;
        }

        /** Records the entry, then sends the answer held. @param failed an exception came out of the chain: a 500 */
        void finish(boolean failed) throws IOException {
            if (!finished.compareAndSet(false, true)) {
                return;
            }
            try {
                record(change, request, failed ? 500 : response.getStatus(),
                        change.operation().startsWith("jolokia") ? response.getContentAsByteArray() : null);
            } finally {
                response.copyBodyToResponse();
            }
        }

        @Override
        public void onComplete(AsyncEvent event) throws IOException {
            // an async request that ended without a dispatch here (a timeout, an error): its answer is gone already
            if (finished.compareAndSet(false, true)) {
                record(change, request, response.getStatus(), null);
            }
        }

        @Override
        public void onTimeout(AsyncEvent event) {
        }

        @Override
        public void onError(AsyncEvent event) {
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
        }
    }

    /** The change a request asks for, or null if it asks for none. The path is in normal form here (NormalFormFilter). */
    private Change change(HttpServletRequest request) {
        String method = request.getMethod();
        String path = request.getRequestURI().substring(request.getContextPath().length());
        String jolokia = jolokiaPath(path);
        if (jolokia != null) {
            if ("POST".equals(method)) {
                return new Change("jolokia", "jolokia", false, true);
            }
            // GET /jolokia/exec/<mbean>/<operation>/... and /jolokia/write/<mbean>/<attribute>/<value>, or that path
            // as its p parameter
            String[] parts = io.lockwatch.security.JolokiaRequestTypes.requestPath(jolokia, request).split("/", 3);
            String type = parts[0].toLowerCase(Locale.ROOT);
            if ("GET".equals(method) && (type.equals("exec") || type.equals("write"))) {
                return new Change("jolokia." + type, parts.length > 1 ? "mbean/" + parts[1] : "jolokia", false, false);
            }
            return null;
        }
        if (!CHANGES.contains(method)) {
            return null;
        }
        if (path.equals(io.lockwatch.security.SignIns.BACK_CHANNEL_LOGOUT_PATH)) {
            // the identity provider signing a person out; its logout token is a credential: only its size is kept
            return new Change("backChannelLogout", "sessions", false, false);
        }
        if (path.startsWith("/actuator/")) {
            return new Change("actuator." + path.substring("/actuator/".length()).split("/", 2)[0],
                    path.substring(1), true, false);
        }
        if (!path.startsWith(API + "/") || path.equals(API + "/readings")) {
            return null; // readings are the devices' data, and the busiest path: not looked up
        }
        PathContainer container = PathContainer.parsePath(path);
        for (Endpoint e : endpoints) {
            if (e.method().equals(method) && e.pattern().matches(container)) {
                return new Change(e.operationId(), path.substring(API.length() + 1), !BODY_NOT_KEPT.contains(e.operationId()), false);
            }
        }
        return null; // no operation of the contract: nothing was changed, nor could be
    }

    /** The part after Jolokia's prefix (Hawtio's or the actuator's), or null if the path is not Jolokia's. */
    private static String jolokiaPath(String path) {
        for (String prefix : List.of("/actuator/jolokia", "/actuator/hawtio/jolokia")) {
            if (path.equals(prefix) || path.startsWith(prefix + "/")) {
                return path.substring(prefix.length());
            }
        }
        return null;
    }

    /** @param answer Jolokia's answer, whose statuses are each request's own; null elsewhere */
    private void record(Change change, HttpServletRequest request, int status, byte[] answer) {
        String actor = request.getAttribute(CallerAttributes.NAME) instanceof String name ? name : null;
        String kind = actor == null ? "anonymous" : String.valueOf(request.getAttribute(CallerAttributes.KIND));
        String subject = request.getAttribute(CallerAttributes.SUBJECT) instanceof String sub ? sub : null;
        UUID actorClient = request.getAttribute(ClientKeys.REQUEST_ATTRIBUTE) instanceof ClientKeys.Holder h ? h.clientId() : null;
        byte[] body = request instanceof ContentCachingRequestWrapper cached ? cached.getContentAsByteArray() : null;
        List<String[]> what = new ArrayList<>(); // operation, resource, details, status
        // Hawtio's periodic bulk reads come this way too: their answers are not parsed
        List<Integer> statuses = answer == null || (change.jolokiaPost() && !mayChange(body)) ? List.of() : jolokiaStatuses(answer);
        if (change.jolokiaPost()) {
            jolokiaChanges(body, what, statuses);
            if (what.isEmpty() && (status == 401 || status == 403) && (body == null || body.length == 0)) {
                what.add(new String[] {"jolokia", "jolokia", null, null}); // refused before its body was read
            }
        } else if (change.operation().startsWith("jolokia")) {
            what.add(new String[] {change.operation(), change.resource(), null,
                    statuses.size() == 1 && statuses.get(0) != null ? String.valueOf(statuses.get(0)) : null});
        } else {
            String details = null;
            if (change.keepBody() && body != null && body.length > 0) {
                details = body.length >= BODY_KEPT ? Redaction.of(Map.of("body_bytes_over", BODY_KEPT)) : Redaction.fields(body);
            } else if (!change.keepBody() && request.getContentLengthLong() > 0) {
                details = Redaction.of(Map.of("body_bytes", request.getContentLengthLong(),
                        "content_type", String.valueOf(request.getContentType())));
            }
            what.add(new String[] {change.operation(), change.resource(), details, null});
        }
        for (String[] w : what) {
            int itsStatus = w[3] == null || status != 200 ? status : Integer.parseInt(w[3]);
            recorder.record(new AuditLog.Entry(UUID.randomUUID(), clock.instant(), actor == null ? "anonymous" : actor,
                    kind, subject, actorClient, w[0], request.getMethod(), w[1], w[2], itsStatus, outcome(itsStatus),
                    request.getRemoteAddr(), cut(request.getHeader("User-Agent")), correlationId(request)));
        }
    }

    private static boolean mayChange(byte[] body) {
        String text = body == null ? "" : new String(body, java.nio.charset.StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
        return text.contains("exec") || text.contains("write");
    }

    /** The status of each request Jolokia answered, in order (null where an answer has none); empty if none can be read. */
    private static List<Integer> jolokiaStatuses(byte[] answer) {
        List<Integer> statuses = new ArrayList<>();
        if (answer == null || answer.length == 0) {
            return statuses;
        }
        try {
            JsonNode answers = JSON.readTree(answer);
            for (JsonNode a : answers == null ? JSON.createArrayNode() : answers.isArray() ? answers : JSON.createArrayNode().add(answers)) {
                statuses.add(a.path("status").isInt() ? a.get("status").asInt() : null);
            }
        } catch (IOException e) {
            statuses.clear();
        }
        return statuses;
    }

    /** Each exec and write of a Jolokia request (or bulk request); reads, lists and searches change nothing. */
    private static void jolokiaChanges(byte[] body, List<String[]> what, List<Integer> statuses) {
        if (body == null || body.length == 0) {
            return;
        }
        JsonNode requests;
        try {
            requests = JSON.readTree(body);
        } catch (IOException e) {
            return;
        }
        if (requests == null) {
            return;
        }
        int i = -1;
        for (JsonNode r : requests.isArray() ? requests : JSON.createArrayNode().add(requests)) {
            i++;
            String type = r.path("type").asText("").toLowerCase(Locale.ROOT);
            if (type.equals("exec") || type.equals("write")) {
                // the operation or attribute, and how many arguments: their values may be anything, a password included
                Map<String, Object> details = new java.util.LinkedHashMap<>();
                if (r.hasNonNull("operation")) {
                    details.put("operation", r.get("operation").asText());
                }
                if (r.hasNonNull("attribute")) {
                    details.put("attribute", r.get("attribute").asText());
                }
                if (r.has("arguments")) {
                    details.put("arguments", r.get("arguments").size());
                }
                Integer status = i < statuses.size() ? statuses.get(i) : null;
                what.add(new String[] {"jolokia." + type, "mbean/" + r.path("mbean").asText(""), Redaction.of(details),
                        status == null ? null : String.valueOf(status)});
            }
        }
    }

    static String outcome(int status) {
        if (status == 401 || status == 403) {
            return "refused";
        }
        if (status >= 500) {
            return "failed";
        }
        return status >= 400 ? "rejected" : "succeeded";
    }

    private static String correlationId(HttpServletRequest request) {
        String id = request.getHeader("X-Correlation-Id");
        return id == null ? null : cut(id);
    }

    private static String cut(String s) {
        return s == null || s.length() <= 256 ? s : s.substring(0, 256);
    }
}
