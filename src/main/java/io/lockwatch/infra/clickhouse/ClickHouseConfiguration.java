package io.lockwatch.infra.clickhouse;

import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * ClickHouse connectivity. It is deliberately not a {@code javax.sql.DataSource} bean: that would make
 * Spring Boot back off from configuring the PostgreSQL one.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(ClickHouseSettings.class)
@ConditionalOnExpression("!'${lockwatch.clickhouse.url:}'.isBlank()")
class ClickHouseConfiguration {

    @Bean
    ClickHouse clickHouse(ClickHouseSettings settings) {
        return new ClickHouse(settings);
    }

    @Bean
    ClickHouseHealthIndicator clickHouseHealthIndicator(ClickHouse clickHouse) {
        return new ClickHouseHealthIndicator(clickHouse);
    }
}
