package io.lockwatch.api;

import io.lockwatch.history.HistoryStore;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.ingest.ReadingParser;
import io.lockwatch.notify.ClaimWakeUp;
import io.lockwatch.notify.TargetGuard;
import io.lockwatch.registry.Registry;
import io.lockwatch.infra.amqp.ConfirmedPublisher;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

@Configuration(proxyBeanMethods = false)
public class ApiConfiguration {

    @Bean
    Registry registry(JdbcTemplate jdbc, TransactionTemplate tx,
                      @Value("${lockwatch.heartbeat.timeout}") java.time.Duration defaultTimeout,
                      io.lockwatch.secrets.SecretCipher cipher) {
        return new Registry(jdbc, tx, defaultTimeout.toSeconds(), cipher);
    }

    @Bean
    SensorsApi sensorsApi(Registry registry) {
        return new SensorsApi(registry);
    }

    @Bean
    ClientsApi clientsApi(Registry registry, TargetGuard guard, io.lockwatch.notify.NotificationStore notifications,
                          io.lockwatch.notify.NotifyProperties notify, io.lockwatch.notify.TestPing ping,
                          io.lockwatch.notify.ClientGates gates, ClaimWakeUp claims) {
        return new ClientsApi(registry, guard, notifications, notify.secretGrace(), ping, gates, claims);
    }

    @Bean
    HistoryApi historyApi(HistoryStore store, Registry registry) {
        return new HistoryApi(store, registry);
    }

    @Bean
    NotificationsApi notificationsApi(JdbcTemplate jdbc, ClaimWakeUp claims) {
        return new NotificationsApi(jdbc, claims);
    }

    @Bean
    ReadingsApi readingsApi(ReadingParser parser, ConfirmedPublisher publisher, IngestProperties ingest) {
        return new ReadingsApi(parser, publisher, ingest);
    }

    @Bean
    ApiDocument apiDocument() throws java.io.IOException {
        return ApiDocument.load(ApiDocument.CONTRACT);
    }

    /** Found by Camel's REST binding in the registry, before its own. */
    @Bean
    ProblemReportingValidator problemReportingValidator() {
        return new ProblemReportingValidator();
    }
}
