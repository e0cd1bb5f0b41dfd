package io.lockwatch.ingest;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Spring Boot's short report, not a stack trace, for an instance that refused to start beside another. */
public class AnotherInstanceFailureAnalyzer extends AbstractFailureAnalyzer<AnotherInstanceException> {

    @Override
    protected FailureAnalysis analyze(Throwable root, AnotherInstanceException cause) {
        return new FailureAnalysis(cause.getMessage(),
                "Stop the other instance, or give every instance the same lockwatch.ingest.partitions (N > 1 needs "
                        + "RabbitMQ; see docs/scaling.md).", cause);
    }
}
