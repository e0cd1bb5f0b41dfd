package io.lockwatch.heartbeat;

import io.lockwatch.ingest.ReadingsBacklog;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(HeartbeatProperties.class)
class HeartbeatConfiguration {

    @Bean(initMethod = "reconcileTimeouts")
    HeartbeatScan heartbeat(JdbcTemplate jdbc, TransactionTemplate tx, ReadingsBacklog backlog, HeartbeatProperties props,
                            MeterRegistry meters, io.lockwatch.infra.tracing.Traces traces,
                            io.lockwatch.infra.metrics.SampledGauges sampled,
                            io.lockwatch.adapters.DeviceProfiles profiles) {
        HeartbeatScan scan = new HeartbeatScan(jdbc, tx, backlog, props, meters, traces, profiles.heartbeatTimeouts());
        sampled.register("lockwatch.sensors.lost.now", io.micrometer.core.instrument.Tags.empty(), "sensors lost now",
                scan::countLost);
        return scan;
    }
}
