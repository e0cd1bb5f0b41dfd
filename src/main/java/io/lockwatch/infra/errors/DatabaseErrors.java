package io.lockwatch.infra.errors;

import java.sql.SQLException;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.TransientDataAccessResourceException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.support.SQLExceptionTranslator;

/**
 * A database that has turned read-only (a failover to a standby, or an operator's switch while the primary is
 * repaired) is away, not a reason to give up: its refusals are made transient, so that every flow waits it out
 * with its retries (routes/error-handling.camel.yaml) instead of parking readings as failed. Spring alone reports
 * PostgreSQL's {@code 25006 read_only_sql_transaction} as an uncategorised error.
 */
@Configuration(proxyBeanMethods = false)
class DatabaseErrors {

    static final String READ_ONLY_SQL_TRANSACTION = "25006";

    @Bean
    static BeanPostProcessor readOnlyDatabaseIsAway() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String name) {
                if (bean instanceof JdbcTemplate jdbc) {
                    jdbc.setExceptionTranslator(new ReadOnlyIsAway(jdbc.getExceptionTranslator()));
                }
                return bean;
            }
        };
    }

    /** Translates a read-only refusal as transient; anything else as before. */
    static final class ReadOnlyIsAway implements SQLExceptionTranslator {

        private final SQLExceptionTranslator delegate;

        ReadOnlyIsAway(SQLExceptionTranslator delegate) {
            this.delegate = delegate;
        }

        @Override
        public DataAccessException translate(String task, String sql, SQLException ex) {
            for (SQLException e = ex; e != null; e = e.getNextException()) {
                if (READ_ONLY_SQL_TRANSACTION.equals(e.getSQLState())) {
                    return new TransientDataAccessResourceException(task + ": the database is read-only", ex);
                }
            }
            return delegate.translate(task, sql, ex);
        }
    }
}
