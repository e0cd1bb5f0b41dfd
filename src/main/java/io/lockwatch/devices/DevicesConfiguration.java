package io.lockwatch.devices;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(DevicesProperties.class)
class DevicesConfiguration {

    @Bean
    Devices devices(JdbcTemplate jdbc, TransactionTemplate tx) {
        return new Devices(jdbc, tx);
    }

    @Bean
    BrokerAuth brokerAuth(Devices devices, io.lockwatch.ingest.IngestProperties ingest,
                          @org.springframework.beans.factory.annotation.Value("${lockwatch.mqtt.topic-exchange:}") String mqttExchange,
                          io.micrometer.core.instrument.MeterRegistry meters) {
        return new BrokerAuth(devices, ingest.exchange(), mqttExchange.isBlank() ? null : mqttExchange, meters);
    }
}
