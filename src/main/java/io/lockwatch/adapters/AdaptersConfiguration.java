package io.lockwatch.adapters;

import io.lockwatch.infra.amqp.ConfirmedPublisher;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties({DeviceProfiles.class, AdaptersProperties.class})
class AdaptersConfiguration {

    @Bean
    Zigbee2MqttAdapter zigbee2mqtt(JdbcTemplate jdbc, DeviceProfiles profiles, ConfirmedPublisher publisher,
                                   @Value("${lockwatch.ingest.exchange}") String readingsExchange, AdaptersProperties adapters,
                                   MeterRegistry meters, @Value("${lockwatch.pipeline.enabled}") boolean pipeline) {
        return new Zigbee2MqttAdapter(jdbc, profiles, publisher, readingsExchange, adapters.zigbee2mqtt().baseTopic(), meters,
                new OneInstance(jdbc.getDataSource(), Zigbee2MqttAdapter.NAME), pipeline);
    }
}
