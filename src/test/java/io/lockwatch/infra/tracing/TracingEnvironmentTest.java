package io.lockwatch.infra.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

/** OpenTelemetry's standard variables as the service reads them; no variable, no tracing. */
class TracingEnvironmentTest {

    @Test
    void offWithoutAnExporterEndpoint() {
        Map<String, Object> d = TracingEnvironment.defaults(Map.<String, String>of()::get);
        assertThat(d).containsEntry("management.tracing.enabled", false)
                .doesNotContainKey("management.otlp.tracing.endpoint")
                .containsEntry("camel.observation.enabled", "false");
    }

    @Test
    void theGeneralEndpointGetsTheTracesPathTheSignalsOwnIsTakenAsItIs() {
        assertThat(TracingEnvironment.defaults(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/")::get))
                .containsEntry("management.tracing.enabled", true)
                .containsEntry("management.otlp.tracing.endpoint", "http://collector:4318/v1/traces");
        assertThat(TracingEnvironment.defaults(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:9999/in")::get))
                .containsEntry("management.otlp.tracing.endpoint", "http://traces:9999/in");
    }

    @Test
    void camelsSpanPerExchangeStaysOffWithTracingOnUnlessAskedFor() {
        assertThat(TracingEnvironment.defaults(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")::get))
                .containsEntry("management.tracing.enabled", true)
                .containsEntry("camel.observation.enabled", "false");
    }

    @Test
    void theSdkSwitchedOffOrNoTracesExporterKeepsItOff() {
        assertThat(TracingEnvironment.defaults(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318",
                "OTEL_SDK_DISABLED", "true")::get)).containsEntry("management.tracing.enabled", false);
        assertThat(TracingEnvironment.defaults(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318",
                "OTEL_TRACES_EXPORTER", "none")::get)).containsEntry("management.tracing.enabled", false);
    }

    @Test
    void samplingAndServiceName() {
        assertThat(TracingEnvironment.defaults(Map.<String, String>of()::get))
                .containsEntry("management.tracing.sampling.probability", "1.0");
        assertThat(TracingEnvironment.defaults(Map.of("OTEL_TRACES_SAMPLER_ARG", "0.25", "OTEL_SERVICE_NAME", "doors-eu")::get))
                .containsEntry("management.tracing.sampling.probability", "0.25")
                .containsEntry("management.opentelemetry.resource-attributes.service.name", "doors-eu");
    }
}
