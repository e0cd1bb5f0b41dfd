package io.lockwatch.maintenance;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(MaintenanceProperties.class)
class MaintenanceConfiguration {

    @Bean
    MaintenanceRelease maintenanceRelease(JdbcTemplate jdbc, TransactionTemplate tx, MaintenanceProperties props,
                                          MeterRegistry meters, io.lockwatch.infra.tracing.Traces traces) {
        return new MaintenanceRelease(jdbc, tx, props.releaseBatch(), meters, traces);
    }

    @Bean
    MaintenanceWindows maintenanceWindows(JdbcTemplate jdbc, TransactionTemplate tx) {
        return new MaintenanceWindows(jdbc, tx);
    }
}
