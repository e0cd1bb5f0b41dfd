package io.lockwatch.infra.tracing;

import io.micrometer.tracing.Tracer;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * With tracing off, no tracer. Spring Boot 3.5's {@code management.tracing.enabled=false} only drops the exporters
 * and propagation: the OpenTelemetry SDK's tracer stays, so every HTTP request, ingest batch and delivery attempt
 * built and ended a recorded span that went nowhere, and each webhook carried a {@code traceparent} no one could
 * look up. Micrometer's no-op tracer here keeps Boot's OpenTelemetry tracer out (it is built only if there is none),
 * and {@link Traces} then builds nothing.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "management.tracing.enabled", havingValue = "false")
class TracingOff {

    @Bean
    Tracer noTracer() {
        return Tracer.NOOP;
    }
}
