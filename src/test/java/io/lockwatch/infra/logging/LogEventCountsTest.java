package io.lockwatch.infra.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class LogEventCountsTest {

    @Test
    void countsTheEventsWrittenPerLevelAndNotTheOnesDropped() {
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        new LogEventCounts().bindTo(meters);
        Logger log = (Logger) LoggerFactory.getLogger("lockwatch.test.log-event-counts");
        log.setLevel(Level.INFO);
        double warnBefore = count(meters, "warn");
        double debugBefore = count(meters, "debug");

        log.warn("one");
        log.warn("two");
        log.debug("dropped: below the logger's level");

        assertThat(count(meters, "warn") - warnBefore).isEqualTo(2);
        assertThat(count(meters, "debug") - debugBefore).isZero();
    }

    @Test
    void countsAgainAfterLogbackIsReconfigured() {
        LoggerContext context = new LoggerContext(); // not the tests' own: a reset drops every appender
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        new LogEventCounts(context).bindTo(meters);
        Logger log = context.getLogger("lockwatch.test.log-event-counts-reset");
        log.error("before the reset");

        context.reset(); // as a reconfiguration of Logback does
        log.error("after the reset");

        assertThat(count(meters, "error")).isEqualTo(2);
    }

    private static double count(SimpleMeterRegistry meters, String level) {
        return meters.get("logback.events").tag("level", level).counter().count();
    }
}
