package io.lockwatch.alarms;

import io.lockwatch.heartbeat.HeartbeatProperties;
import io.lockwatch.ingest.ReadingsBacklog;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(AlarmProperties.class)
class AlarmsConfiguration {

    @Bean(initMethod = "reconcileDefault")
    AlarmScan alarms(JdbcTemplate jdbc, TransactionTemplate tx, AlarmProperties props, ReadingsBacklog backlog,
                     HeartbeatProperties heartbeat, MeterRegistry meters, io.lockwatch.infra.tracing.Traces traces,
                     io.lockwatch.infra.metrics.SampledGauges sampled) {
        AlarmScan scan = new AlarmScan(jdbc, tx, props, backlog, heartbeat, meters, traces);
        sampled.register("lockwatch.alarms.active", io.micrometer.core.instrument.Tags.empty(), "alarms raised and not cleared",
                scan::countActive);
        return scan;
    }

    @Bean
    OpenSchedules openSchedules(JdbcTemplate jdbc, AlarmProperties props) {
        return new OpenSchedules(jdbc, props.openAfter() == null ? null : (int) props.openAfter().toSeconds());
    }

    @Bean
    AlarmStore alarmStore(JdbcTemplate jdbc, TransactionTemplate tx) {
        return new AlarmStore(jdbc, tx);
    }
}
