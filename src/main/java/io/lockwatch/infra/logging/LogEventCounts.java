package io.lockwatch.infra.logging;

import java.util.Map;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggerContextListener;
import ch.qos.logback.core.AppenderBase;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.slf4j.LoggerFactory;

/**
 * {@code logback.events}, the log events written per level, as Micrometer's Logback binder names them, counted by
 * an appender on the root logger instead of its turbo filter. Logback asks a turbo filter about every
 * {@code isTraceEnabled()} and {@code isDebugEnabled()} of every library, also for the events it then drops: on
 * the readings' path that was 4% of the service's CPU (docs/BENCHMARKS.md). An appender sees only the events that
 * are written. Micrometer's binder is switched off in {@code application.yaml}.
 */
class LogEventCounts implements MeterBinder {

    private final String appender = "lockwatch-log-event-counts-" + Integer.toHexString(System.identityHashCode(this));
    private final Object logging;

    LogEventCounts() {
        this(LoggerFactory.getILoggerFactory());
    }

    LogEventCounts(Object logging) {
        this.logging = logging;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        if (!(logging instanceof LoggerContext context)) {
            return; // another logging backend: nothing to count
        }
        Map<Level, Counter> counters = new java.util.HashMap<>();
        for (Level level : new Level[] {Level.ERROR, Level.WARN, Level.INFO, Level.DEBUG, Level.TRACE}) {
            counters.put(level, Counter.builder("logback.events").tag("level", level.levelStr.toLowerCase(java.util.Locale.ROOT))
                    .description("Number of log events that were enabled by the effective log level").register(registry));
        }
        attach(context, counters);
        // a reset of Logback's configuration (e.g. a changed logback file) drops every appender: attach it again
        context.addListener(new LoggerContextListener() {
            @Override public boolean isResetResistant() { return true; }
            @Override public void onStart(LoggerContext c) { }
            @Override public void onReset(LoggerContext c) { attach(c, counters); }
            @Override public void onStop(LoggerContext c) { }
            @Override public void onLevelChange(Logger logger, Level level) { }
        });
    }

    private void attach(LoggerContext context, Map<Level, Counter> counters) {
        Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        if (root.getAppender(appender) != null) {
            return;
        }
        AppenderBase<ILoggingEvent> counting = new AppenderBase<>() {
            @Override
            protected void append(ILoggingEvent event) {
                Counter counter = counters.get(event.getLevel());
                if (counter != null) {
                    counter.increment();
                }
            }
        };
        counting.setName(appender);
        counting.setContext(context);
        counting.start();
        root.addAppender(counting);
    }
}
