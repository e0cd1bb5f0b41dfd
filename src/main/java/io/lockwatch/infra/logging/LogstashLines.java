package io.lockwatch.infra.logging;

import java.nio.charset.Charset;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxy;
import org.slf4j.Marker;
import org.slf4j.event.KeyValuePair;
import org.springframework.boot.json.JsonWriter;
import org.springframework.boot.logging.StackTracePrinter;
import org.springframework.boot.logging.structured.ContextPairs;
import org.springframework.boot.logging.structured.JsonWriterStructuredLogFormatter;
import org.springframework.boot.logging.structured.StructuredLoggingJsonMembersCustomizer;

/**
 * Spring Boot's {@code logstash} log lines, turned into bytes once. Boot 3.5's own formatter writes each line through
 * an OutputStreamWriter, which wraps every fragment in a CharBuffer of its own: about 40 KB of garbage a line, a third
 * of what a pulling client's poll allocates, its access line (docs/BENCHMARKS.md). The members and the
 * {@code logging.structured.json.*} settings are Boot's; {@code LogstashLinesTest} holds each line to Boot's own.
 * Set as {@code logging.structured.format.console}, Boot gives the constructor its parameters.
 */
public final class LogstashLines extends JsonWriterStructuredLogFormatter<ILoggingEvent> {

    private static final JsonWriter.PairExtractor<KeyValuePair> KEY_VALUES = JsonWriter.PairExtractor.of(p -> p.key,
            p -> p.value);

    public LogstashLines(StackTracePrinter stackTracePrinter, ContextPairs contextPairs,
                         ThrowableProxyConverter throwableProxyConverter,
                         StructuredLoggingJsonMembersCustomizer<?> customizer) {
        super(members -> members(stackTracePrinter, contextPairs, throwableProxyConverter, members), customizer);
    }

    @Override
    public byte[] formatAsBytes(ILoggingEvent event, Charset charset) {
        return format(event).getBytes(charset);
    }

    private static void members(StackTracePrinter printer, ContextPairs contextPairs, ThrowableProxyConverter converter,
                                JsonWriter.Members<ILoggingEvent> members) {
        members.add("@timestamp", ILoggingEvent::getInstant).as(LogstashLines::timestamp);
        members.add("@version", "1");
        members.add("message", ILoggingEvent::getFormattedMessage);
        members.add("logger_name", ILoggingEvent::getLoggerName);
        members.add("thread_name", ILoggingEvent::getThreadName);
        members.add("level", ILoggingEvent::getLevel);
        members.add("level_value", ILoggingEvent::getLevel).as(Level::toInt);
        members.add().usingPairs(contextPairs.flat("_", pairs -> {
            pairs.addMapEntries(ILoggingEvent::getMDCPropertyMap);
            pairs.add(ILoggingEvent::getKeyValuePairs, KEY_VALUES);
        }));
        members.add("tags", ILoggingEvent::getMarkerList).whenNotNull().as(LogstashLines::markers).whenNotEmpty();
        members.add("stack_trace", event -> event).whenNotNull(ILoggingEvent::getThrowableProxy)
                .as(event -> stackTrace(printer, converter, event));
    }

    private static String timestamp(Instant instant) {
        return DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(OffsetDateTime.ofInstant(instant, ZoneId.systemDefault()));
    }

    private static Set<String> markers(List<Marker> markers) {
        Set<String> names = new LinkedHashSet<>();
        addMarkers(names, markers.iterator());
        return names;
    }

    private static void addMarkers(Set<String> names, Iterator<Marker> markers) {
        while (markers.hasNext()) {
            Marker marker = markers.next();
            names.add(marker.getName());
            if (marker.hasReferences()) {
                addMarkers(names, marker.iterator());
            }
        }
    }

    private static String stackTrace(StackTracePrinter printer, ThrowableProxyConverter converter, ILoggingEvent event) {
        if (printer != null && event.getThrowableProxy() instanceof ThrowableProxy proxy) {
            return printer.printStackTraceToString(proxy.getThrowable());
        }
        return converter.convert(event);
    }
}
