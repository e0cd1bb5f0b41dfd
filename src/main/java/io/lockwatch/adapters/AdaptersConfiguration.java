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
    NetworkAdapter.AdapterServices adapterServices(JdbcTemplate jdbc, DeviceProfiles profiles, ConfirmedPublisher publisher,
                                                   @Value("${lockwatch.ingest.exchange}") String readingsExchange,
                                                   MeterRegistry meters,
                                                   @Value("${lockwatch.pipeline.enabled}") boolean pipeline) {
        return new NetworkAdapter.AdapterServices(jdbc, profiles, publisher, readingsExchange, meters, pipeline);
    }

    @Bean
    Zigbee2MqttAdapter zigbee2mqtt(NetworkAdapter.AdapterServices services, AdaptersProperties adapters) {
        return new Zigbee2MqttAdapter(services, adapters.zigbee2mqtt().baseTopic());
    }

    @Bean
    ChirpStackAdapter chirpstack(NetworkAdapter.AdapterServices services) {
        return new ChirpStackAdapter(services);
    }

    @Bean
    TheThingsStackAdapter theThingsStack(NetworkAdapter.AdapterServices services) {
        return new TheThingsStackAdapter(services);
    }

    @Bean
    ShellyAdapter shelly(NetworkAdapter.AdapterServices services) {
        return new ShellyAdapter(services);
    }
}
