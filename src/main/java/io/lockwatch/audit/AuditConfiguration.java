package io.lockwatch.audit;

import java.time.Clock;

import io.lockwatch.api.ApiDocument;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.jdbc.core.JdbcTemplate;

@Configuration(proxyBeanMethods = false)
class AuditConfiguration {

    @Bean
    AuditLog auditLog(JdbcTemplate jdbc) {
        return new AuditLog(jdbc);
    }

    @Bean
    Recorder auditRecorder(AuditLog auditLog, MeterRegistry meters,
                           @Value("${lockwatch.audit.refused-per-second}") int refusedPerSecond) {
        return new Recorder(auditLog, meters, refusedPerSecond, Clock.systemUTC());
    }

    /**
     * Around Spring Security's chain (order -100), so that its refusals are recorded too; after the correlation id,
     * the host names and the path's normal form (orders 0 to 3 from the first), so that the path it reads is the one
     * the rules and the routes see.
     */
    @Bean
    FilterRegistrationBean<AuditFilter> auditFilter(ApiDocument contract, Recorder recorder) {
        FilterRegistrationBean<AuditFilter> filter = new FilterRegistrationBean<>(new AuditFilter(contract, recorder, Clock.systemUTC()));
        filter.setOrder(Ordered.HIGHEST_PRECEDENCE + 4);
        filter.setAsyncSupported(true);
        return filter;
    }

    /** Found by Camel among the beans, as every EventNotifier is. */
    @Bean
    RouteChanges auditedRouteChanges(Recorder recorder) {
        return new RouteChanges(recorder, Clock.systemUTC());
    }
}
