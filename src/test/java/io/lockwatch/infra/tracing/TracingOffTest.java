package io.lockwatch.infra.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.tracing.Tracer;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Tracing off, as it is by default (and in Spring Boot's tests): no tracer at all, so nothing builds a span. Boot's
 * own switch leaves the OpenTelemetry SDK's tracer recording every request's span with nowhere to send it.
 */
@CamelSpringBootTest
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class TracingOffTest {

    @Autowired Tracer tracer;
    @Autowired Traces traces;

    @Test
    void offIsMicrometersNoOpTracerAndNoSpanIsBuilt() {
        assertThat(tracer).isSameAs(Tracer.NOOP);
        assertThat(traces.on()).isFalse();
        assertThat(traces.startRoot("batch", io.micrometer.tracing.Span.Kind.CONSUMER, System.currentTimeMillis())).isNull();
    }
}
