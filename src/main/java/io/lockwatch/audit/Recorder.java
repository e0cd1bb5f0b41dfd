package io.lockwatch.audit;

import java.time.Clock;

import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Appends entries to the audit log, each counted by outcome. Refused attempts (401, 403) are counted every one, and
 * recorded up to {@code refusedPerSecond} a second: someone without a credential must not be able to fill the log,
 * or the database, by knocking. They are told in the service's log at most one line a second, the ones since the last
 * line summed. An entry the database cannot take now is logged (it holds no secrets) and counted, and the change it
 * records stands: the log is a record of changes, not a gate in front of them.
 */
final class Recorder {

    private static final Logger log = LoggerFactory.getLogger(Recorder.class);

    private final AuditLog auditLog;
    private final MeterRegistry meters;
    private final int refusedPerSecond;
    private final Clock clock;
    private long second = Long.MIN_VALUE;
    private int refusedThisSecond;
    private long loggedSecond = Long.MIN_VALUE;
    private long refusedSinceLine;

    Recorder(AuditLog auditLog, MeterRegistry meters, int refusedPerSecond, Clock clock) {
        this.auditLog = auditLog;
        this.meters = meters;
        this.refusedPerSecond = refusedPerSecond;
        this.clock = clock;
    }

    void record(AuditLog.Entry entry) {
        if ("refused".equals(entry.outcome()) && !admitRefused(entry)) {
            meters.counter("lockwatch.audit.unrecorded", "reason", "over-budget").increment();
            return;
        }
        try {
            auditLog.append(entry);
            meters.counter("lockwatch.audit.entries", "outcome", entry.outcome()).increment();
        } catch (org.springframework.dao.DataAccessException e) {
            meters.counter("lockwatch.audit.unrecorded", "reason", "database").increment();
            log.error("Audit entry not recorded ({}): {} {} {} on {} by {} ({}) from {}: {}", e.getClass().getSimpleName(),
                    entry.outcome(), entry.status(), entry.operation(), entry.resource(), entry.actor(),
                    entry.actorKind(), entry.address(), entry.details());
        }
    }

    /** Counts the refusal, logs a line if none was logged this second, and says whether the log takes it. */
    private synchronized boolean admitRefused(AuditLog.Entry entry) {
        meters.counter("lockwatch.audit.refused").increment();
        long now = clock.millis() / 1000;
        if (now != second) {
            second = now;
            refusedThisSecond = 0;
        }
        refusedSinceLine++;
        if (now != loggedSecond) {
            loggedSecond = now;
            log.warn("Refused change: {} {} {} on {} by {} from {}{}", entry.status(), entry.method(), entry.operation(),
                    entry.resource(), entry.actor(), entry.address(),
                    refusedSinceLine > 1 ? " (" + (refusedSinceLine - 1) + " more refused since the last such line)" : "");
            refusedSinceLine = 0;
        }
        return refusedThisSecond++ < refusedPerSecond;
    }
}
