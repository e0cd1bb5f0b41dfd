package io.lockwatch.retention;

import java.time.Clock;
import java.time.Duration;

import io.lockwatch.history.ClickHouseRetention;
import io.lockwatch.infra.clickhouse.ClickHouse;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

@Configuration(proxyBeanMethods = false)
class RetentionConfiguration {

    @Bean
    Retention retention(JdbcTemplate jdbc, ObjectProvider<ClickHouse> clickHouse, MeterRegistry meters,
                        @Value("${lockwatch.notify.retention}") Duration notifications,
                        @Value("${lockwatch.history.retention}") Duration history,
                        @Value("${lockwatch.retention.batch}") int batch,
                        @Value("${lockwatch.retention.pause-factor}") double pauseFactor,
                        io.lockwatch.audit.AuditLog auditLog,
                        @Value("${lockwatch.audit.retention}") Duration audit) {
        ClickHouse ch = clickHouse.getIfAvailable();
        return new Retention(jdbc, notifications, history, batch, ch == null ? null : new ClickHouseRetention(ch, history),
                Clock.systemUTC(), meters, pauseFactor, Retention.Pause.SLEEP, auditLog::removeBefore, audit);
    }
}
