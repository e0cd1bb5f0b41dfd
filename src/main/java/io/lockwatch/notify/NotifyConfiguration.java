package io.lockwatch.notify;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(NotifyProperties.class)
class NotifyConfiguration {

    @Bean
    NotificationStore notificationStore(JdbcTemplate jdbc, TransactionTemplate tx, io.lockwatch.secrets.SecretCipher cipher) {
        return new NotificationStore(jdbc, tx, cipher);
    }

    @Bean
    NotificationQueries notificationQueries(JdbcTemplate jdbc) {
        return new NotificationQueries(jdbc);
    }

    @Bean
    FeedWatch feedWatch(JdbcTemplate jdbc, Feed feed, io.micrometer.core.instrument.MeterRegistry meters) {
        FeedWatch watch = new FeedWatch(jdbc, feed);
        meters.gauge("lockwatch.feed.waiting", watch, FeedWatch::waiting);
        return watch;
    }

    @Bean
    Feed feed(JdbcTemplate jdbc) {
        return new Feed(jdbc);
    }

    @Bean
    TargetGuard targetGuard(NotifyProperties props) {
        return new TargetGuard(props.allowPrivateTargets());
    }

    @Bean
    Lanes lanes(NotifyProperties props, MeterRegistry meters) {
        NotifyProperties.Lane bounds = props.lane();
        Lanes lanes = new Lanes(bounds.minConcurrency(), bounds.initialConcurrency(), bounds.maxConcurrency(),
                props.timeout(), props.circuitFailures(), props.circuitOpenFor().toMillis(), System::currentTimeMillis);
        meters.gauge("lockwatch.clients.circuit.open", lanes, Lanes::notClosed);
        return lanes;
    }

    @Bean
    TestPing testPing(NotificationStore store, TargetGuard guard, WebhookPoster poster, Lanes lanes, NotifyProperties props) {
        return new TestPing(store, guard, poster, lanes, props.timeout());
    }

    @Bean
    ClaimWakeUp claimWakeUp(org.apache.camel.ProducerTemplate producer, Lanes lanes) {
        return new ClaimWakeUp(producer, lanes);
    }

    /** Closed after the routes have stopped, so that the attempts of the last posts are written. */
    @Bean(destroyMethod = "close")
    AttemptRecorder attemptRecorder(NotificationStore store, MeterRegistry meters) {
        return new AttemptRecorder(store, meters);
    }

    @Bean
    Notifications notifications(NotificationStore store, AttemptRecorder recorder, Lanes lanes, ClaimWakeUp wakeUps,
                                io.lockwatch.ingest.IngestProperties ingest, TargetGuard guard, NotifyProperties props,
                                MeterRegistry meters, io.lockwatch.infra.tracing.Traces traces,
                                io.lockwatch.infra.metrics.SampledGauges sampled) {
        // the retry queue (pending after a failed attempt) and the dead ones an operator should look at
        sampled.register("lockwatch.notifications.retrying", io.micrometer.core.instrument.Tags.empty(),
                "notifications pending after a failed attempt", store::countRetrying);
        sampled.register("lockwatch.notifications.dead", io.micrometer.core.instrument.Tags.empty(),
                "notifications that failed every attempt", store::countDead);
        return new Notifications(store, recorder, lanes, wakeUps, ingest.memberTimeout(), guard, props, meters, traces);
    }

    @Bean(destroyMethod = "close")
    WebhookPoster webhookPoster(NotifyProperties props, TargetGuard guard) {
        return new WebhookPoster(props, guard);
    }
}
