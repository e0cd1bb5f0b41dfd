package io.lockwatch.infra.errors;

import com.zaxxer.hikari.HikariDataSource;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The service's pool, made to answer at once while the database is away ({@link DatabaseAway}). */
@Configuration(proxyBeanMethods = false)
class DatabaseAwayConfiguration {

    /** After the pool's properties are bound, before anything asks it for a connection. */
    @Bean
    static BeanPostProcessor poolAnswersAtOnceWhileTheDatabaseIsAway() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String name) {
                return bean instanceof HikariDataSource pool && "dataSource".equals(name) ? DatabaseAway.watched(pool) : bean;
            }
        };
    }
}
