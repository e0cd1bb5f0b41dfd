package io.lockwatch.api;

import java.util.Map;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.web.servlet.error.ErrorController;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.RequestMapping;

/**
 * The answer to every request that ends in the container's error page instead of a route: a path or method the API
 * does not have, a media type it does not speak, a body the container cannot read, or a fault. Always problem+json,
 * whatever the request's {@code Accept} asked for, so that no answer of the service is an HTML page. A 5xx is logged
 * with the request's correlation id, which its answer carries.
 */
@Controller
class HttpErrors implements ErrorController {

    private static final Logger log = LoggerFactory.getLogger(HttpErrors.class);

    @RequestMapping("${server.error.path:/error}")
    ResponseEntity<byte[]> answer(HttpServletRequest request) {
        Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        int status = code instanceof Integer i ? i : 404;
        Throwable failure = (Throwable) request.getAttribute(RequestDispatcher.ERROR_EXCEPTION);
        Map<String, Object> body;
        if (status >= 500) {
            String id = CorrelationIds.of(request);
            log.error("Unexpected failure answering {} {} (correlation id {})", request.getMethod(),
                    request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI), id, failure);
            body = Problems.body(status, title(status), detail(status) + "; the error is logged with correlation id " + id, null);
            body.put("correlation_id", id);
        } else {
            body = Problems.body(status, title(status), detail(status), null);
        }
        // a preset Content-Type is not negotiated: the answer is problem+json whatever Accept asked for
        return ResponseEntity.status(status).contentType(PROBLEM).body(Problems.bytes(body));
    }

    private static final MediaType PROBLEM = MediaType.parseMediaType(Problems.CONTENT_TYPE);

    static String title(int status) {
        HttpStatus known = HttpStatus.resolve(status);
        return known == null ? "Error" : known.getReasonPhrase();
    }

    static String detail(int status) {
        return switch (status) {
            case 400 -> "the request is not valid HTTP the API can read";
            case 404 -> "no such path";
            case 405 -> "this path does not take this method";
            case 406 -> "the API answers application/json (errors application/problem+json): accept one of them, or */*";
            case 413 -> "the request body is too large";
            case 414 -> "the request's URI is too long";
            case 415 -> "the request body must be application/json";
            case 431 -> "the request's headers are too large";
            default -> status >= 500 ? "the service could not answer" : title(status);
        };
    }
}
