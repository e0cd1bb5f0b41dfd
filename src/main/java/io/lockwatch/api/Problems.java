package io.lockwatch.api;

import java.util.LinkedHashMap;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.camel.Exchange;
import org.springframework.stereotype.Component;

/**
 * The one renderer of problem+json (RFC 9457) answers: the API's routes (an {@link ApiProblem}, a service away, a
 * fault), and the answers given before a route is reached, by the security chain, the container and its filters
 * ({@link #write}). Every answer has the same fields: type, title, status, detail, and field where one is at fault.
 */
@Component("problems")
public class Problems {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Problems.class);

    public static final String CONTENT_TYPE = "application/problem+json";
    private static final ObjectMapper JSON = Json.MAPPER;

    public void render(Exchange exchange) throws JsonProcessingException {
        Throwable cause = exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Throwable.class);
        ApiProblem problem = cause instanceof ApiProblem p ? p
                : ApiProblem.notJson();
        exchange.getMessage().removeHeaders("*", "CamelHttp*");
        exchange.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, problem.status());
        exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, CONTENT_TYPE);
        Map<String, Object> body = body(problem.status(), problem.title(), problem.getMessage(), problem.field());
        if (!problem.errors().isEmpty()) {
            body.put("errors", problem.errors());
        }
        exchange.getMessage().setBody(JSON.writeValueAsString(body));
    }

    /**
     * 503: the database or the broker is away, or a statement ran past its timeout (said as such). Answered at once with {@code Retry-After}; logged (without a stack
     * trace: it is the service's state, not a defect) with the request's correlation id, which the answer carries.
     */
    public void unavailable(Exchange exchange) {
        Throwable cause = exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Throwable.class);
        String id = exchange.getMessage().getHeader(CorrelationIds.HEADER, String.class);
        boolean timedOut = io.lockwatch.infra.errors.ServicesAway.statementTimedOut(cause);
        log.warn("Answering {} with 503, {} (correlation id {}): {}", exchange.getFromRouteId(),
                timedOut ? "a statement ran past the database's statement timeout" : "a service it needs is away",
                id, cause == null ? "?" : cause.toString());
        Map<String, Object> body = body(503, "Service Unavailable", (timedOut
                ? "the database cancelled the request's statement at its statement timeout (it is busy, or the request "
                        + "asks for much); nothing was changed; try again later, or ask for less"
                : "the database or the message broker is not available right now; try again shortly")
                + " (correlation id " + id + ")", null);
        body.put("correlation_id", id);
        exchange.getMessage().removeHeaders("*", "CamelHttp*");
        exchange.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 503);
        exchange.getMessage().setHeader("Retry-After", "5");
        exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, CONTENT_TYPE);
        exchange.getMessage().setBody(json(body));
    }

    /**
     * 500: a fault of the service, no rule foresaw. Logged with its stack trace and the request's correlation id,
     * which the answer names, so that the caller's report leads to the log line; the answer tells nothing more.
     */
    public void internalError(Exchange exchange) {
        Throwable cause = exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Throwable.class);
        String id = exchange.getMessage().getHeader(CorrelationIds.HEADER, String.class);
        log.error("Unexpected failure answering {} (correlation id {})", exchange.getFromRouteId(), id, cause);
        exchange.getMessage().removeHeaders("*");
        exchange.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 500);
        exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, CONTENT_TYPE);
        // the answer's X-Correlation-Id header is the filter's (CorrelationIds); set here too, it would come twice
        Map<String, Object> body = body(500, "Internal Server Error",
                "the service could not answer; the error is logged with correlation id " + id, null);
        body.put("correlation_id", id);
        exchange.getMessage().setBody(json(body));
    }

    /** A problem answered on the servlet response, before or outside Camel (filters, the security chain). */
    public static void write(jakarta.servlet.http.HttpServletResponse response, int status, String title, String detail)
            throws java.io.IOException {
        response.setStatus(status);
        response.setContentType(CONTENT_TYPE);
        response.getOutputStream().write(bytes(body(status, title, detail, null)));
    }

    /** A problem's body as JSON bytes. */
    public static byte[] bytes(Map<String, Object> body) {
        try {
            return JSON.writeValueAsBytes(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A problem's body as JSON text. */
    public static String json(Map<String, Object> body) {
        try {
            return JSON.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    public static Map<String, Object> body(int status, String title, String detail, String field) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("type", "about:blank");
        p.put("title", title);
        p.put("status", status);
        p.put("detail", detail);
        if (field != null) {
            p.put("field", field);
        }
        return p;
    }
}
