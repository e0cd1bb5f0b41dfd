package io.lockwatch.infra.amqp;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Spring Boot's short report, not a stack trace, for queues of another type than configured. */
public class QueueMismatchFailureAnalyzer extends AbstractFailureAnalyzer<QueueMismatchException> {

    @Override
    protected FailureAnalysis analyze(Throwable root, QueueMismatchException cause) {
        return new FailureAnalysis(cause.getMessage(), cause.typeChange()
                ? "Set lockwatch.amqp.queue-type to the type the queues have, or move to the new type: drain the "
                        + "queues and delete them, or shovel their messages into queues of the new type "
                        + "(docs/scaling.md, \"Moving to quorum queues\")."
                : "Set lockwatch.amqp.queue-type=classic, or run on RabbitMQ (the external profile).", cause);
    }
}
