package io.lockwatch.selfservice;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

@Configuration(proxyBeanMethods = false)
class SelfServiceConfiguration {

    @Bean
    ClientKeys clientKeys(JdbcTemplate jdbc) {
        return new ClientKeys(jdbc);
    }
}
