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
}
