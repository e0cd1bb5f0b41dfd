package io.lockwatch.selfservice;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;

@Configuration(proxyBeanMethods = false)
class SelfServiceConfiguration {

    @Bean
    ClientKeys clientKeys(JdbcTemplate jdbc,
                          @org.springframework.beans.factory.annotation.Value("${lockwatch.client-keys.cache-for}")
                          java.time.Duration cacheFor) {
        return new ClientKeys(jdbc, cacheFor);
    }

    @Bean
    PortalLinks portalLinks(JdbcTemplate jdbc, org.springframework.transaction.support.TransactionTemplate tx, ClientKeys keys,
                            @org.springframework.beans.factory.annotation.Value("${lockwatch.portal.session-length}")
                            java.time.Duration sessionLength) {
        return new PortalLinks(jdbc, tx, keys, sessionLength);
    }
}
