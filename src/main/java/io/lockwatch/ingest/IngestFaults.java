package io.lockwatch.ingest;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each failure of an ingest step that is not a service away (routes/ingest.camel.yaml,
 * {@code ingest-batch-faults-are-retried}): a fault of the service, never the readings' (bad input is parked as it is
 * parsed). Counted ({@code lockwatch_ingest_apply_failures_total}, which an alert watches) and logged with its stack
 * trace, as the batch is held unacknowledged and tried again; nothing is parked or dropped.
 */
class IngestFaults implements Processor {

    private static final Logger log = LoggerFactory.getLogger(IngestFaults.class);

    private final Counter failures;

    IngestFaults(MeterRegistry meters) {
        this.failures = meters.counter("lockwatch.ingest.apply.failures");
    }

    @Override
    public void process(Exchange exchange) {
        failures.increment();
        Throwable cause = exchange.getException() != null ? exchange.getException()
                : exchange.getProperty(Exchange.EXCEPTION_CAUGHT, Throwable.class);
        Object body = exchange.getMessage().getBody();
        log.error("Ingest step failed in route {} (failure {} in a row); its batch of {} is held unacknowledged and tried again",
                exchange.getFromRouteId(), exchange.getMessage().getHeader(Exchange.REDELIVERY_COUNTER, 1, Integer.class),
                body instanceof IngestBatch b ? b.size() + " messages" : "messages", cause);
    }
}
