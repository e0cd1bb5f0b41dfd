package io.lockwatch.history;

import java.sql.SQLException;

import io.lockwatch.infra.clickhouse.ClickHouse;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.amqp.core.Queue;
import io.lockwatch.infra.amqp.ConfirmedPublisher;
import io.lockwatch.infra.amqp.WatchedQueues;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The history store: ClickHouse when {@code lockwatch.clickhouse.url} is set (its schema migrated at start, and
 * events and attempts exported from PostgreSQL), else PostgreSQL.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(HistoryProperties.class)
class HistoryConfiguration {

    @Bean
    Queue historyQueue(HistoryProperties props, io.lockwatch.infra.amqp.QueueTypes types) {
        return types.durable(props.queue());
    }

    /** The history queue's backlog is reported. */
    @Bean
    WatchedQueues historyQueues(HistoryProperties props) {
        return () -> java.util.List.of(new WatchedQueues.Queue(props.queue(), "history"));
    }

    @Bean
    HistoryStore historyStore(ObjectProvider<ClickHouse> clickHouse, JdbcTemplate jdbc) throws SQLException {
        ClickHouse ch = clickHouse.getIfAvailable();
        if (ch == null) {
            return new PostgresHistoryStore(jdbc);
        }
        new ClickHouseSchema(ch).migrate();
        return new ClickHouseHistoryStore(ch);
    }

    @Bean
    HistorySteps history(HistoryStore store, ConfirmedPublisher publisher, HistoryProperties props, MeterRegistry meters) {
        return new HistorySteps(store, publisher, props, meters);
    }

    /** Present only with ClickHouse: the export route is started only when this bean exists. */
    @Bean
    HistoryExportOrNothing historyExport(HistoryStore store, JdbcTemplate jdbc, TransactionTemplate tx,
                                         HistoryProperties props, MeterRegistry meters) {
        return new HistoryExportOrNothing(store instanceof ClickHouseHistoryStore ch
                ? new HistoryExport(jdbc, tx, ch, props.exportBatch(), meters) : null);
    }

    /** The export to ClickHouse, or nothing to do when history is in PostgreSQL already. */
    public record HistoryExportOrNothing(HistoryExport export) {
        public int run() {
            return export == null ? 0 : export.export();
        }
    }
}
