package io.lockwatch.infra.tracing;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;
import org.springframework.stereotype.Component;

/**
 * The spans that follow an event across its flows, which Camel's per-route spans cannot: readings are applied in
 * batches, and a notification is posted later, by any instance, from its row in the outbox. So a reading's trace is
 * its batch's: the batch span's W3C {@code traceparent} is kept with each notification the batch records, every
 * delivery attempt is a span under it, and the webhook request carries the attempt's {@code traceparent}, so a
 * client can join the trace.
 * <p>
 * With tracing off (the default) the tracer is Micrometer's no-op one, and every method here returns or does nothing
 * before building anything: the hot path pays one comparison.
 */
@Component
public class Traces {

    public static final String TRACEPARENT = "traceparent";
    public static final String TRACESTATE = "tracestate";

    private final Tracer tracer;
    private final Propagator propagator;
    private final boolean on;

    public Traces(Tracer tracer, Propagator propagator) {
        this.tracer = tracer;
        this.propagator = propagator;
        this.on = tracer != Tracer.NOOP;
    }

    /** A tracer that is off: for code built outside Spring (tests, tools). */
    public static Traces off() {
        return new Traces(Tracer.NOOP, Propagator.NOOP);
    }

    public boolean on() {
        return on;
    }

    /**
     * A new span, the first of its trace, that began at {@code startedAtMillis} (epoch milliseconds: a batch's
     * span begins with its first reading); null when tracing is off.
     */
    public Span startRoot(String name, Span.Kind kind, long startedAtMillis) {
        if (!on) {
            return null;
        }
        return tracer.spanBuilder().setNoParent().name(name).kind(kind)
                .startTimestamp(startedAtMillis, TimeUnit.MILLISECONDS).start();
    }

    /**
     * For a scan's round from {@code startedAtMillis} until now that recorded {@code events} (none: no span): its
     * span, ended, whose {@code traceparent} is returned to be kept with the notifications of those events; null
     * when tracing is off or nothing was recorded.
     */
    public String scanRound(String name, long startedAtMillis, int events) {
        if (!on || events == 0) {
            return null;
        }
        Span span = startRoot(name, Span.Kind.PRODUCER, startedAtMillis);
        span.tag("lockwatch.events", String.valueOf(events));
        span.end();
        return traceParent(span);
    }

    /**
     * A new span under the one a {@code traceparent} names (a new trace if it names none); null when tracing is
     * off.
     */
    public Span startUnder(String traceParent, String name, Span.Kind kind) {
        if (!on) {
            return null;
        }
        Span.Builder builder;
        if (traceParent == null) {
            builder = tracer.spanBuilder().setNoParent();
        } else {
            builder = propagator.extract(Map.of(TRACEPARENT, traceParent), (carrier, key) -> carrier.get(key));
        }
        return builder.name(name).kind(kind).start();
    }

    /** The span's W3C {@code traceparent}, to keep with what it caused; null for no span. */
    public String traceParent(Span span) {
        if (span == null) {
            return null;
        }
        Map<String, String> headers = new HashMap<>(2);
        propagator.inject(span.context(), headers, Map::put);
        return headers.get(TRACEPARENT);
    }

    /** Writes the span's context as W3C headers ({@code traceparent}, maybe {@code tracestate}); nothing for no span. */
    public void inject(Span span, BiConsumer<String, String> header) {
        if (span != null) {
            propagator.inject(span.context(), header, BiConsumer::accept);
        }
    }

    public static void tag(Span span, String key, Object value) {
        if (span != null && value != null) {
            span.tag(key, String.valueOf(value));
        }
    }

    /** Ends the span, marked failed by {@code error} if there is one; nothing for no span. */
    public static void end(Span span, Throwable error) {
        if (span != null) {
            if (error != null) {
                span.error(error);
            }
            span.end();
        }
    }
}
