package io.lockwatch.infra.startup;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Turns a missing broker or database at start-up into Spring Boot's short report instead of a stack trace. */
public class DependencyUnavailableFailureAnalyzer extends AbstractFailureAnalyzer<DependencyUnavailableException> {

    @Override
    protected FailureAnalysis analyze(Throwable root, DependencyUnavailableException cause) {
        return new FailureAnalysis(cause.getMessage(),
                "Start " + cause.dependency() + " (scripts/services.sh up starts all three locally), or point "
                        + cause.property() + " at a running one, or run without the 'external' profile to use the "
                        + "embedded default.",
                cause);
    }
}
