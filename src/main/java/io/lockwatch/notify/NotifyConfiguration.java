package io.lockwatch.notify;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.camel.component.http.HttpComponent;
import org.apache.camel.spi.ComponentCustomizer;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(NotifyProperties.class)
public class NotifyConfiguration {

    @Bean
    NotificationStore notificationStore(JdbcTemplate jdbc, TransactionTemplate tx) {
        return new NotificationStore(jdbc, tx);
    }

    @Bean
    TargetGuard targetGuard(NotifyProperties props) {
        return new TargetGuard(props.allowPrivateTargets());
    }

    @Bean
    ClientGates clientGates(NotifyProperties props) {
        return new ClientGates(props.perClientConcurrency(), props.circuitFailures(), props.circuitOpenFor().toMillis(),
                System::currentTimeMillis);
    }

    @Bean
    TestPing testPing(NotificationStore store, TargetGuard guard, NotifyProperties props) {
        return new TestPing(store, guard, props);
    }

    @Bean
    ClaimWakeUp claimWakeUp(org.apache.camel.ProducerTemplate producer) {
        return new ClaimWakeUp(producer);
    }

    /** Closed after the routes have stopped, so that the attempts of the last posts are written. */
    @Bean(destroyMethod = "close")
    AttemptRecorder attemptRecorder(NotificationStore store, MeterRegistry meters) {
        return new AttemptRecorder(store, meters);
    }

    @Bean
    Notifications notifications(NotificationStore store, AttemptRecorder recorder, ClientGates gates, TargetGuard guard,
                                NotifyProperties props, MeterRegistry meters) {
        return new Notifications(store, recorder, gates, guard, props, meters);
    }

    /**
     * The HTTP client of webhook posts: bounded in time (a 2xx within the timeout or the attempt failed), no
     * redirects (a redirect could lead past the SSRF guard), no cookies, no retries of its own, one pool for all
     * clients.
     */
    @Bean
    ComponentCustomizer webhookHttpClient(NotifyProperties props) {
        // applied last, after the starter has bound camel.component.http.* (whose defaults would undo these)
        return ComponentCustomizer.builder(HttpComponent.class).withOrder(org.apache.camel.Ordered.LOWEST).build(http -> {
            http.setConnectTimeout(props.connectTimeout().toMillis());
            http.setConnectionRequestTimeout(props.timeout().toMillis());
            http.setResponseTimeout(props.timeout().toMillis());
            http.setSoTimeout(props.timeout().toMillis());
            http.setFollowRedirects(false);
            http.setRedirectHandlingDisabled(true);
            http.setCookieManagementDisabled(true);
            // every attempt is lockwatch's to make and record: HttpClient would silently repeat a POST on 503
            http.setAutomaticRetriesDisabled(true);
            http.setMaxTotalConnections(Math.max(200, props.maxConcurrent() * 2));
            http.setConnectionsPerRoute(Math.max(props.perClientConcurrency() * 2, 20));
            http.setUserAgent("lockwatch-webhooks/1");
        });
    }
}
