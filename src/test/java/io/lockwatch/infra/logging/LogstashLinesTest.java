package io.lockwatch.infra.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.slf4j.MarkerFactory;
import org.slf4j.event.KeyValuePair;
import org.springframework.boot.logging.logback.StructuredLogEncoder;
import org.springframework.core.env.Environment;
import org.springframework.mock.env.MockEnvironment;

/**
 * Each line {@link LogstashLines} writes is the line Spring Boot's own {@code logstash} format writes for the same
 * event, field by field: a plain one, one with the request's MDC and key-value pairs, one with markers, one with an
 * exception; and with {@code logging.structured.json.*} settings, which both honour.
 */
class LogstashLinesTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void everyLineIsBootsLogstashLine() throws Exception {
        assertSameLines(new MockEnvironment());
    }

    @Test
    void bootsJsonSettingsApplyAsToBootsOwn() throws Exception {
        assertSameLines(new MockEnvironment().withProperty("logging.structured.json.exclude", "thread_name")
                .withProperty("logging.structured.json.rename.logger_name", "logger")
                .withProperty("logging.structured.json.add.service", "lockwatch"));
    }

    private static void assertSameLines(Environment environment) throws Exception {
        LoggerContext context = new LoggerContext();
        context.setMDCAdapter(new ch.qos.logback.classic.util.LogbackMDCAdapter());
        context.putObject(Environment.class.getName(), environment);
        StructuredLogEncoder boots = encoder(context, "logstash");
        StructuredLogEncoder ours = encoder(context, LogstashLines.class.getName());
        for (LoggingEvent event : events(context)) {
            String expected = new String(boots.encode(event), StandardCharsets.UTF_8);
            String actual = new String(ours.encode(event), StandardCharsets.UTF_8);
            JsonNode tree = JSON.readTree(actual);
            assertThat(tree).as(actual).isEqualTo(JSON.readTree(expected));
            assertThat(actual).endsWith("\n").doesNotContain("\n{");
        }
    }

    private static StructuredLogEncoder encoder(LoggerContext context, String format) {
        StructuredLogEncoder encoder = new StructuredLogEncoder();
        encoder.setContext(context);
        encoder.setFormat(format);
        encoder.setCharset(StandardCharsets.UTF_8);
        encoder.start();
        return encoder;
    }

    private static List<LoggingEvent> events(LoggerContext context) {
        LoggingEvent plain = event(context, Level.INFO, "Started in {} s", null, 4.2);
        LoggingEvent request = event(context, Level.INFO, "Client key {} of client {}: readClientFeed (held)", null,
                "k1", "c1");
        request.setMDCPropertyMap(Map.of("correlation_id", "0f3a", "trace_id", "abc"));
        request.addKeyValuePair(new KeyValuePair("client_id", "c1"));
        LoggingEvent marked = event(context, Level.WARN, "Delivery to {} failed: \"quoted\" \u00e9", null, "x");
        org.slf4j.Marker parent = MarkerFactory.getDetachedMarker("delivery");
        parent.add(MarkerFactory.getDetachedMarker("webhook"));
        marked.addMarker(parent);
        LoggingEvent failed = event(context, Level.ERROR, "Batch failed", new IllegalStateException("no database",
                new java.io.IOException("connection refused")));
        return List.of(plain, request, marked, failed);
    }

    private static LoggingEvent event(LoggerContext context, Level level, String message, Throwable thrown,
                                      Object... arguments) {
        LoggingEvent event = new LoggingEvent(LogstashLinesTest.class.getName(), context.getLogger("io.lockwatch.test"),
                level, message, thrown, arguments);
        event.setThreadName("http-nio-8080-exec-1");
        return event;
    }
}
