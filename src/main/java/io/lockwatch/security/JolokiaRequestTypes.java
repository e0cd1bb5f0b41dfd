package io.lockwatch.security;

import java.io.IOException;
import java.util.Locale;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.api.Problems;
import io.lockwatch.api.ReplayedRequest;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Jolokia serves JMX notification listeners and its own configuration without asking its restrictor, so
 * {@link JolokiaPolicy} cannot refuse them: a listener registered is kept until it is unregistered, by anyone
 * who may read. Both are refused here, by GET path or in any request of a POST (bulk requests included).
 */
public final class JolokiaRequestTypes extends OncePerRequestFilter {

    private static final Set<String> UNSERVED = Set.of("notification", "config");

    /**
     * The path a Jolokia GET acts on, without its leading slashes: the URL's own after Jolokia's mount, or, when that is
     * empty, its {@code p} parameter, as Jolokia reads it. Whatever judges or records Jolokia's requests reads this.
     */
    public static String requestPath(String afterMount, jakarta.servlet.http.HttpServletRequest request) {
        String path = afterMount.replaceFirst("^/+", "");
        if (path.isEmpty() && request.getParameter("p") != null) {
            path = request.getParameter("p").replaceFirst("^/+", "");
        }
        return path;
    }
    private static final int MAX_BODY = 1024 * 1024;
    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    protected boolean shouldNotFilterAsyncDispatch() {
        return true;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if ("GET".equals(request.getMethod())) {
            String path = requestPath(request.getPathInfo() == null ? "" : request.getPathInfo(), request);
            String type = path.split("/", 2)[0].toLowerCase(Locale.ROOT);
            if (UNSERVED.contains(type)) {
                refuse(response, type);
                return;
            }
            chain.doFilter(request, response);
            return;
        }
        if (!"POST".equals(request.getMethod())) {
            chain.doFilter(request, response);
            return;
        }
        byte[] body = request.getInputStream().readNBytes(MAX_BODY + 1);
        if (body.length > MAX_BODY) {
            Problems.write(response, 413, "Content Too Large", "a Jolokia request may hold at most 1 MB");
            return;
        }
        String unserved = unservedType(body);
        if (unserved != null) {
            refuse(response, unserved);
            return;
        }
        chain.doFilter(new ReplayedRequest(request, body), response);
    }

    /** The first request type of the body that is not served, or null; a body that is not JSON is Jolokia's to refuse. */
    private static String unservedType(byte[] body) {
        JsonNode requests;
        try {
            requests = JSON.readTree(body);
        } catch (IOException e) {
            return null;
        }
        for (JsonNode r : requests == null ? JSON.createArrayNode() : requests.isArray() ? requests : JSON.createArrayNode().add(requests)) {
            String type = r.path("type").asText("").toLowerCase(Locale.ROOT);
            if (UNSERVED.contains(type)) {
                return type;
            }
        }
        return null;
    }

    private static void refuse(HttpServletResponse response, String type) throws IOException {
        Problems.write(response, 403, "Forbidden", "Jolokia's " + type + " requests are not served here");
    }
}
