package io.lockwatch.infra.errors;

import io.lockwatch.ingest.IngestBatch;
import io.lockwatch.ingest.IngestSteps;
import org.apache.camel.Exchange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

/**
 * What the route configuration does with a failure it has no rule for. Whatever the flow, the message must not
 * be lost and must not come back into the same failure: an ingest batch is parked whole and acknowledged;
 * an API request is answered 500 with its correlation id, which the log line names too; anything else is logged with its route, and its own flow's durable state (an
 * outbox row, a lease) brings it back later.
 */
@Component("unexpectedFailures")
public class UnexpectedFailures {

    private static final Logger log = LoggerFactory.getLogger(UnexpectedFailures.class);

    private final IngestSteps ingest;

    public UnexpectedFailures(IngestSteps ingest) {
        this.ingest = ingest;
    }

    public void handle(Exchange exchange) {
        Exception cause = exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Exception.class);
        Object body = exchange.getMessage().getBody();
        if (body instanceof IngestBatch batch) {
            ingest.parkWhole(batch, cause);
        } else if (exchange.getProperty(Exchange.REST_OPENAPI) != null) {
            // an API request: a 500 that names the log line of its failure by the request's correlation id
            String id = exchange.getMessage().getHeader(io.lockwatch.api.CorrelationIds.HEADER, String.class);
            log.error("Unexpected failure answering {} (correlation id {})", exchange.getFromRouteId(), id, cause);
            exchange.getMessage().removeHeaders("*");
            exchange.getMessage().setHeader(Exchange.HTTP_RESPONSE_CODE, 500);
            exchange.getMessage().setHeader(Exchange.CONTENT_TYPE, io.lockwatch.api.Problems.CONTENT_TYPE);
            // the answer's X-Correlation-Id header is the filter's (CorrelationIds); set here too, it would come twice
            java.util.Map<String, Object> problem = io.lockwatch.api.Problems.body(500, "Internal Server Error",
                    "the service could not answer; the error is logged with correlation id " + id, null);
            problem.put("correlation_id", id);
            exchange.getMessage().setBody(io.lockwatch.api.Problems.json(problem));
        } else {
            log.error("Unexpected failure in route {}", exchange.getFromRouteId(), cause);
        }
    }
}
