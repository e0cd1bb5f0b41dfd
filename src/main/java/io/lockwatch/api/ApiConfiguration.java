package io.lockwatch.api;

import io.lockwatch.history.HistoryStore;
import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.ingest.ReadingParser;
import io.lockwatch.notify.ClaimWakeUp;
import io.lockwatch.notify.NotificationQueries;
import io.lockwatch.notify.NotificationStore;
import io.lockwatch.notify.TargetGuard;
import io.lockwatch.registry.Registry;
import io.lockwatch.infra.amqp.ConfirmedPublisher;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

@Configuration(proxyBeanMethods = false)
class ApiConfiguration {

    @Bean
    Registry registry(JdbcTemplate jdbc, TransactionTemplate tx,
                      @Value("${lockwatch.heartbeat.timeout}") java.time.Duration defaultTimeout,
                      @Value("${lockwatch.alarms.open-after:#{null}}") java.time.Duration openAfter,
                      io.lockwatch.secrets.SecretCipher cipher) {
        return new Registry(jdbc, tx, defaultTimeout.toSeconds(), openAfter == null ? null : (int) openAfter.toSeconds(),
                cipher);
    }

    @Bean(destroyMethod = "close")
    io.lockwatch.registry.RegistryImports registryImports(JdbcTemplate jdbc, TransactionTemplate tx, Registry registry,
            org.springframework.transaction.PlatformTransactionManager transactions,
            @Value("${lockwatch.api.import-timeout}") java.time.Duration importTimeout) {
        return new io.lockwatch.registry.RegistryImports(jdbc, transactions,
                new io.lockwatch.registry.RegistryFile(jdbc, tx, registry, importTimeout));
    }

    @Bean
    RegistryFileApi registryFileApi(io.lockwatch.registry.RegistryImports imports, TargetGuard guard, ApiDocument contract,
                                    @Value("${lockwatch.api.import-at-once-max-rows}") int atOnce,
                                    @Value("${lockwatch.api.max-import-rows}") long maxRows,
                                    @Value("${lockwatch.api.max-import-credentials}") int maxCredentials,
                                    org.apache.camel.CamelContext camel, io.lockwatch.adapters.DeviceProfiles profiles) {
        return new RegistryFileApi(imports, guard, FlatSchema.of("RegistryRow", contract.schema("RegistryRow")), atOnce,
                maxRows, maxCredentials, camel.createProducerTemplate(), profiles);
    }

    @Bean
    SensorsApi sensorsApi(Registry registry, io.lockwatch.retention.Retention retention,
                          io.lockwatch.adapters.DeviceProfiles profiles) {
        return new SensorsApi(registry, new io.lockwatch.registry.RegistryViews.Kept(retention.historyKept().toDays(),
                retention.notificationsKept().toDays()), profiles);
    }

    @Bean
    ClientsApi clientsApi(Registry registry, TargetGuard guard, io.lockwatch.notify.NotificationStore notifications,
                          io.lockwatch.notify.NotifyProperties notify, io.lockwatch.notify.TestPing ping,
                          io.lockwatch.notify.Lanes lanes, ClaimWakeUp claims, io.lockwatch.notify.Feed feed) {
        return new ClientsApi(registry, guard, notifications, notify.secretGrace(), notify.replayMaxAge(), ping, lanes, claims,
                feed);
    }

    @Bean
    DevicesApi devicesApi(io.lockwatch.devices.Devices devices,
                          io.lockwatch.devices.DevicesProperties props) {
        return new DevicesApi(devices, props.credentialGrace());
    }

    @Bean
    HistoryApi historyApi(HistoryStore store, Registry registry) {
        return new HistoryApi(store, registry);
    }

    @Bean
    NotificationsApi notificationsApi(NotificationQueries queries, NotificationStore store, ClaimWakeUp claims) {
        return new NotificationsApi(queries, store, claims);
    }

    @Bean
    MaintenanceApi maintenanceApi(io.lockwatch.maintenance.MaintenanceWindows windows) {
        return new MaintenanceApi(windows);
    }

    @Bean
    ClientScope clientScope(ApiDocument contract, JdbcTemplate jdbc, io.lockwatch.selfservice.ClientKeys keys) {
        return new ClientScope(contract, jdbc, keys);
    }

    @Bean
    PortalApi portalApi(io.lockwatch.selfservice.PortalLinks links) {
        return new PortalApi(links);
    }

    @Bean
    ClientKeysApi clientKeysApi(io.lockwatch.selfservice.ClientKeys keys) {
        return new ClientKeysApi(keys);
    }

    @Bean
    SessionsApi sessionsApi(io.lockwatch.security.SignIns signIns) {
        return new SessionsApi(signIns);
    }

    @Bean
    AuditApi auditApi(io.lockwatch.audit.AuditLog log) {
        return new AuditApi(log);
    }

    @Bean
    AlarmsApi alarmsApi(io.lockwatch.alarms.AlarmStore store, io.lockwatch.alarms.OpenSchedules schedules) {
        return new AlarmsApi(store, schedules);
    }

    @Bean
    ReadingsApi readingsApi(ReadingParser parser, ConfirmedPublisher publisher, IngestProperties ingest,
                            io.lockwatch.devices.Devices devices,
                            io.lockwatch.adapters.TheThingsStackAdapter theThingsStack) {
        return new ReadingsApi(parser, publisher, ingest, devices, theThingsStack);
    }

    @Bean
    ApiDocument apiDocument() throws java.io.IOException {
        return ApiDocument.load(ApiDocument.CONTRACT);
    }

    /** The feed's long polls, whichever door they come in by. */
    @Bean(destroyMethod = "close")
    HeldReads heldFeedReads(io.lockwatch.notify.FeedWatch watch, io.lockwatch.notify.Feed feed,
            @org.springframework.beans.factory.annotation.Value("${lockwatch.feed.read-threads}") int readThreads) {
        return new HeldReads(watch, feed, readThreads);
    }

    /** After Spring Security's chain (order -100), so that the caller is known before a read is held. */
    @Bean
    org.springframework.boot.web.servlet.FilterRegistrationBean<FeedLongPoll> feedLongPoll(HeldReads reads) {
        var filter = new org.springframework.boot.web.servlet.FilterRegistrationBean<>(new FeedLongPoll(reads));
        filter.addUrlPatterns("/api/v1/clients/*");
        filter.setDispatcherTypes(jakarta.servlet.DispatcherType.REQUEST);
        filter.setAsyncSupported(true);
        filter.setOrder(0);
        return filter;
    }

    /** The feed's own port, if one is given (-1, the default: none; 0: any free one). */
    @Bean
    @org.springframework.boot.autoconfigure.condition.ConditionalOnExpression("${lockwatch.feed.listener.port:-1} >= 0")
    FeedListener feedListener(HeldReads reads, io.lockwatch.security.Bearers bearers,
            @org.springframework.beans.factory.annotation.Value("${lockwatch.feed.listener.address:}") String address,
            @org.springframework.beans.factory.annotation.Value("${lockwatch.feed.listener.port}") int port,
            @org.springframework.beans.factory.annotation.Value("${lockwatch.feed.listener.idle-timeout}") java.time.Duration idle,
            io.micrometer.core.instrument.MeterRegistry meters) {
        return new FeedListener(reads, bearers, address, port, (int) Math.max(1, idle.toSeconds()), meters);
    }

    /**
     * Ends the held long polls when the service stops, before the web server's graceful shutdown waits for the
     * requests in flight (a later phase), so that a restart is not held up by its pulling clients.
     */
    @Bean
    org.springframework.context.SmartLifecycle heldFeedReadsEndOnStop(HeldReads reads) {
        return new org.springframework.context.SmartLifecycle() {
            private volatile boolean running;

            @Override
            public void start() {
                running = true;
            }

            @Override
            public void stop() {
                running = false;
                reads.endAll();
            }

            @Override
            public boolean isRunning() {
                return running;
            }

            @Override
            public int getPhase() {
                return org.springframework.context.SmartLifecycle.DEFAULT_PHASE; // the graceful shutdown's is 1,024 below
            }
        };
    }

    /** First of all filters: even a request the firewall refuses has an id to quote. */
    @Bean
    org.springframework.boot.web.servlet.FilterRegistrationBean<CorrelationIds> correlationIds() {
        var filter = new org.springframework.boot.web.servlet.FilterRegistrationBean<>(new CorrelationIds());
        filter.setOrder(org.springframework.core.Ordered.HIGHEST_PRECEDENCE);
        return filter;
    }

    /** On the API only, after the path's normal form is vouched for. */
    @Bean
    org.springframework.boot.web.servlet.FilterRegistrationBean<IdentityEncodingOnly> identityEncodingOnly() {
        var filter = new org.springframework.boot.web.servlet.FilterRegistrationBean<>(new IdentityEncodingOnly());
        filter.addUrlPatterns("/api/*");
        filter.setOrder(org.springframework.core.Ordered.HIGHEST_PRECEDENCE + 3);
        return filter;
    }

    /** On the API only, the last filter before Camel: the routes see the contract's headers only, and HEAD as GET. */
    @Bean
    org.springframework.boot.web.servlet.FilterRegistrationBean<DeclaredHeadersOnly> declaredHeadersOnly(ApiDocument contract) {
        var filter = new org.springframework.boot.web.servlet.FilterRegistrationBean<>(
                new DeclaredHeadersOnly(contract.headerParameters()));
        filter.addUrlPatterns("/api/*");
        filter.setAsyncSupported(true);
        filter.setOrder(org.springframework.core.Ordered.LOWEST_PRECEDENCE - 10);
        return filter;
    }

    /**
     * On the API only, after the caller is known (Spring Security's chain comes first): an anonymous caller gets a
     * 401 without the body being read.
     */
    @Bean
    org.springframework.boot.web.servlet.FilterRegistrationBean<BodyLimit> bodyLimit(
            @Value("${lockwatch.api.max-body}") org.springframework.util.unit.DataSize maxBody,
            @Value("${lockwatch.api.max-import-body}") org.springframework.util.unit.DataSize maxImportBody) {
        var filter = new org.springframework.boot.web.servlet.FilterRegistrationBean<>(new BodyLimit(maxBody, maxImportBody));
        filter.addUrlPatterns("/api/*");
        filter.setOrder(org.springframework.boot.autoconfigure.security.SecurityProperties.DEFAULT_FILTER_ORDER + 10);
        return filter;
    }

    /** Tomcat's host reports its own refusals (before any servlet) with {@link ProblemErrorReportValve}. */
    @Bean
    org.springframework.boot.web.server.WebServerFactoryCustomizer<org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory>
            problemErrorReports() {
        return factory -> factory.addContextCustomizers(context -> {
            if (!(context.getParent() instanceof org.apache.catalina.core.StandardHost host)) {
                throw new IllegalStateException("the servlet context has no Tomcat host to set the error report of");
            }
            host.setErrorReportValveClass(ProblemErrorReportValve.class.getName());
        });
    }

    /** Found by Camel's REST binding in the registry, before its own. */
    @Bean
    ProblemReportingValidator problemReportingValidator() {
        return new ProblemReportingValidator();
    }
}
