package io.lockwatch.infra.errors;

import io.lockwatch.api.Problems;
import org.apache.camel.Exchange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * The last resort of the shared route configurations (routes/error-handling.camel.yaml) for a failure no rule
 * foresaw: a defect. It must be seen and must not come back into the same failure, so it is logged with its stack
 * trace and handled; what the route was doing is brought back by its flow's own durable state.
 */
@Component("unexpectedFailures")
public class UnexpectedFailures {

    private static final Logger log = LoggerFactory.getLogger(UnexpectedFailures.class);

    private final Problems problems;

    public UnexpectedFailures(Problems problems) {
        this.problems = problems;
    }

    /** For a flow whose work is kept durably (configuration defects-are-logged). */
    public void log(Exchange exchange) {
        log.error("Unexpected failure in route {}", exchange.getFromRouteId(),
                exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Exception.class));
    }

    /**
     * For a route that names no configuration: the API's REST entry, whose caller is answered 500, or an operator's
     * route, whose failure is logged.
     */
    public void handle(Exchange exchange) {
        if (exchange.getProperty(Exchange.REST_OPENAPI) != null) {
            problems.internalError(exchange);
        } else {
            log(exchange);
        }
    }
}
