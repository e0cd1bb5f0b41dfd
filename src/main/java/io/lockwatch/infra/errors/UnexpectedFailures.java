package io.lockwatch.infra.errors;

import org.apache.camel.Exchange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * The last resort of the shared route configurations (routes/error-handling.camel.yaml) for a failure no rule
 * foresaw, in a route whose work is kept durably: a defect. It must be seen and must not come back into the same
 * failure, so it is logged with its stack trace and handled; the flow's own durable state brings the work back.
 */
@Component("unexpectedFailures")
public class UnexpectedFailures {

    private static final Logger log = LoggerFactory.getLogger(UnexpectedFailures.class);

    public void log(Exchange exchange) {
        log.error("Unexpected failure in route {}", exchange.getFromRouteId(),
                exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Exception.class));
    }
}
