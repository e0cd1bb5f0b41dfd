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

    // each network's topics: a Zigbee2MQTT friendly name may have slashes; ChirpStack's every application's uplinks;
    // The Things Stack's of the application it logs in as (it grants QoS 0 only); a Shelly's values, a topic each.
    // Zigbee2MQTT's and Shelly's messages say no time and no id: one at a time (NetworkSubscription says why)

    @Bean(destroyMethod = "close")
    Zigbee2MqttAdapter zigbee2mqtt(NetworkAdapter.AdapterServices services, AdaptersProperties adapters) {
        AdaptersProperties.Zigbee2Mqtt z = adapters.zigbee2mqtt();
        return new Zigbee2MqttAdapter(services, new NetworkSubscription.Settings(z.brokerUrl(), z.clientId(),
                z.username(), z.password(), z.baseTopic() + "/#", 1, 1), z.baseTopic());
    }

    @Bean(destroyMethod = "close")
    ChirpStackAdapter chirpstack(NetworkAdapter.AdapterServices services, AdaptersProperties adapters) {
        AdaptersProperties.ChirpStack c = adapters.chirpstack();
        return new ChirpStackAdapter(services, new NetworkSubscription.Settings(c.brokerUrl(), c.clientId(),
                c.username(), c.password(), "application/+/device/+/event/up", 1, NetworkSubscription.MOST_AT_ONCE));
    }

    @Bean(destroyMethod = "close")
    TheThingsStackAdapter theThingsStack(NetworkAdapter.AdapterServices services, AdaptersProperties adapters) {
        AdaptersProperties.TheThingsStack t = adapters.theThingsStack();
        return new TheThingsStackAdapter(services, new NetworkSubscription.Settings(t.brokerUrl(), t.clientId(),
                t.username(), t.password(), "v3/+/devices/+/up", 0, NetworkSubscription.MOST_AT_ONCE));
    }

    @Bean(destroyMethod = "close")
    ShellyAdapter shelly(NetworkAdapter.AdapterServices services, AdaptersProperties adapters) {
        AdaptersProperties.Shelly s = adapters.shelly();
        return new ShellyAdapter(services, new NetworkSubscription.Settings(s.brokerUrl(), s.clientId(),
                s.username(), s.password(), "shellies/+/sensor/+", 1, 1));
    }
}
