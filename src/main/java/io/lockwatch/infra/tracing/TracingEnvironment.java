package io.lockwatch.infra.tracing;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Tracing is off unless it is asked for, in either of the two usual ways: Spring's {@code management.tracing.*}
 * and {@code management.otlp.tracing.*}, or OpenTelemetry's standard environment variables, read here as
 * defaults below every other source (so a Spring setting wins):
 * <ul>
 * <li>{@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} (as it is) or {@code OTEL_EXPORTER_OTLP_ENDPOINT} (+
 * {@code /v1/traces}) turns tracing on and exports there over OTLP/HTTP, unless {@code OTEL_SDK_DISABLED=true} or
 * {@code OTEL_TRACES_EXPORTER=none};</li>
 * <li>{@code OTEL_TRACES_SAMPLER_ARG}, the share of traces kept (default here 1.0: every event's trace; Spring's own
 * default is 0.1);</li>
 * <li>{@code OTEL_SERVICE_NAME}, the service's name in the traces (default {@code spring.application.name}).</li>
 * </ul>
 * Camel's own span per exchange ({@code camel-observation}) is a choice of its own, {@code camel.observation.enabled},
 * off by default even with tracing on: it tripled the service's CPU per reading in the benchmark (every reading is an
 * exchange, and its cost stays even for the routes it leaves out), where the spans above cost a tenth
 * (docs/BENCHMARKS.md). With tracing off nothing of either is installed.
 */
public class TracingEnvironment implements EnvironmentPostProcessor {

    static final String PROPERTY_SOURCE = "lockwatchTracingDefaults";
    /**
     * Camel spans not worth their cost: a message's own span (a reading's trace is its batch's, see
     * {@link Traces}), timers and scans that fire every few milliseconds or seconds, and the in-memory hand-overs
     * between a flow's stages, whose work carries its own spans.
     */
    static final String EXCLUDED_CAMEL_ENDPOINTS = "timer:*,quartz:*,seda:*,spring-rabbitmq:*,readings:*,"
            + "direct:claim-due-notifications";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment env, SpringApplication application) {
        if (!env.getPropertySources().contains(PROPERTY_SOURCE)) {
            env.getPropertySources().addLast(new MapPropertySource(PROPERTY_SOURCE, defaults(env::getProperty)));
        }
    }

    static Map<String, Object> defaults(Function<String, String> env) {
        Map<String, Object> props = new HashMap<>();
        String endpoint = env.apply("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        if (blank(endpoint) && !blank(env.apply("OTEL_EXPORTER_OTLP_ENDPOINT"))) {
            endpoint = env.apply("OTEL_EXPORTER_OTLP_ENDPOINT").replaceAll("/+$", "") + "/v1/traces";
        }
        boolean off = "true".equalsIgnoreCase(env.apply("OTEL_SDK_DISABLED"))
                || "none".equalsIgnoreCase(env.apply("OTEL_TRACES_EXPORTER"));
        boolean on = !blank(endpoint) && !off;
        props.put("management.tracing.enabled", on);
        if (on) {
            props.put("management.otlp.tracing.endpoint", endpoint);
        }
        String ratio = env.apply("OTEL_TRACES_SAMPLER_ARG");
        props.put("management.tracing.sampling.probability", blank(ratio) ? "1.0" : ratio);
        String name = env.apply("OTEL_SERVICE_NAME");
        if (!blank(name)) {
            props.put("management.opentelemetry.resource-attributes.service.name", name);
        }
        props.put("camel.observation.enabled", "false");
        props.put("camel.observation.exclude-patterns", EXCLUDED_CAMEL_ENDPOINTS);
        return props;
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
