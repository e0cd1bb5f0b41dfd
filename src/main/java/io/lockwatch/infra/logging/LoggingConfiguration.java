package io.lockwatch.infra.logging;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

@Configuration(proxyBeanMethods = false)
class LoggingConfiguration {

    @Bean
    LogEventCounts logEventCounts() {
        return new LogEventCounts();
    }
}
