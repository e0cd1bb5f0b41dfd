package io.lockwatch.security;

import java.util.Set;

import javax.management.ObjectName;

import jakarta.servlet.http.HttpServletRequest;
import org.jolokia.server.core.service.api.Restrictor;
import org.jolokia.server.core.util.HttpMethod;
import org.jolokia.server.core.util.RequestType;
import org.springframework.web.context.request.RequestContextHolder;
import org.springframework.web.context.request.ServletRequestAttributes;

/**
 * What a token may do through Jolokia (and so through Hawtio), decided per request by whose token it is:
 * <ul>
 *   <li>a read token reads: {@code read}, {@code list}, {@code search} and {@code version}, by GET or POST;</li>
 *   <li>a full token also runs the operations Hawtio's Camel view needs: a route's start, stop, suspend and
 *       resume, and the statistics; only by POST, so that a link or an image on another site cannot;</li>
 *   <li>nobody runs anything else, writes an attribute, or reads the JVM's system properties and arguments
 *       (where a token may have been passed), unless {@code lockwatch.management.allow-unsafe-operations}.</li>
 * </ul>
 * A browser request from another origin is refused, and no CORS header ever invites one.
 */
final class JolokiaPolicy implements Restrictor {

    private static final Set<RequestType> READING = Set.of(RequestType.READ, RequestType.LIST, RequestType.SEARCH,
            RequestType.VERSION);
    private static final Set<String> ROUTE_CONTROL = Set.of("start", "stop", "suspend", "resume");
    /** Hawtio's Camel view: the route diagram's source and the statistics laid over it. */
    private static final Set<String> CAMEL_VIEW = Set.of("dumpRoutesAsXml", "dumpRouteAsXml", "dumpRouteStatsAsXml",
            "dumpRoutesStatsAsXml", "dumpStepStatsAsXml", "dumpStatsAsXml", "reset");
    /** Hawtio's own read-only helpers: the tree of MBeans it shows, and what the caller may invoke there. */
    private static final Set<String> HAWTIO_VIEW = Set.of("list", "canInvoke");

    private final boolean unsafe;

    JolokiaPolicy(ManagementProperties props) {
        this.unsafe = props.allowUnsafeOperations();
    }

    @Override
    public boolean isHttpMethodAllowed(HttpMethod method) {
        return method == HttpMethod.GET || method == HttpMethod.POST;
    }

    /** Jolokia asks this for some request types only (list, search, notification); the checks below do the rest. */
    @Override
    public boolean isTypeAllowed(RequestType type) {
        Caller caller = Caller.current();
        if (caller == Caller.ANONYMOUS) {
            return false;
        }
        return READING.contains(type) || type == RequestType.EXEC || (unsafe && mayAct());
    }

    @Override
    public boolean isAttributeReadAllowed(ObjectName name, String attribute) {
        if (Caller.current() == Caller.ANONYMOUS) {
            return false;
        }
        return unsafe || !("java.lang".equals(name.getDomain()) && "Runtime".equals(name.getKeyProperty("type"))
                && ("SystemProperties".equals(attribute) || "InputArguments".equals(attribute)));
    }

    @Override
    public boolean isAttributeWriteAllowed(ObjectName name, String attribute) {
        return unsafe && mayAct();
    }

    @Override
    public boolean isOperationAllowed(ObjectName name, String operation) {
        if (!mayAct()) {
            return false;
        }
        if (unsafe) {
            return true;
        }
        if (name.isPattern()) {
            return false;
        }
        int signature = operation.indexOf('(');
        String op = signature < 0 ? operation : operation.substring(0, signature);
        String type = name.getKeyProperty("type");
        return switch (name.getDomain()) {
            case "org.apache.camel" -> CAMEL_VIEW.contains(op) || ("routes".equals(type) && ROUTE_CONTROL.contains(op));
            case "hawtio" -> "security".equals(type) && HAWTIO_VIEW.contains(op);
            default -> false;
        };
    }

    @Override
    public boolean isRemoteAccessAllowed(String... hostOrAddress) {
        return true; // who may call is the token's business; where from is the listen address's
    }

    /**
     * Asked with {@code strict} before a request is served (a browser's own origin passes, another one does not),
     * and without it to decide on CORS headers: never, since Hawtio is served from lockwatch itself.
     */
    @Override
    public boolean isOriginAllowed(String origin, boolean strict) {
        if (!strict) {
            return false;
        }
        HttpServletRequest request = currentRequest();
        return request != null && SameOrigin.allows(request, origin);
    }

    /**
     * Hawtio lists its MBeans through an operation of its RBAC registry when it finds one; a read token may run
     * none, so it is shown none and Hawtio falls back on a plain {@code list}.
     */
    @Override
    public boolean isObjectNameHidden(ObjectName name) {
        return "hawtio".equals(name.getDomain()) && "security".equals(name.getKeyProperty("type"))
                && Caller.current() != Caller.FULL;
    }

    /** A full token, by POST: a link or an image on another site sends a GET, and a form's POST its origin. */
    private static boolean mayAct() {
        HttpServletRequest request = currentRequest();
        return Caller.current() == Caller.FULL && request != null && "POST".equals(request.getMethod());
    }

    private static HttpServletRequest currentRequest() {
        return RequestContextHolder.getRequestAttributes() instanceof ServletRequestAttributes attributes
                ? attributes.getRequest() : null;
    }
}
