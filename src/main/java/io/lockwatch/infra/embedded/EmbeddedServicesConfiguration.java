package io.lockwatch.infra.embedded;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

import javax.sql.DataSource;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.AbstractDependsOnBeanFactoryPostProcessor;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;

/**
 * The embedded default. Both services are plain beans that every {@link DataSource} and AMQP connection
 * factory depend on, so Spring has them before anything connects and stops them after everything that
 * used them (Camel, Flyway, the pool, the MQTT listener) has been stopped and closed; {@link EmbeddedServicesStart}
 * starts the two side by side, from {@link EmbeddedServicesEarlyStart} as the context is prepared, and stops them.
 */
@Configuration(proxyBeanMethods = false)
@Profile(EmbeddedEnvironmentPostProcessor.PROFILE)
@EnableConfigurationProperties(EmbeddedProperties.class)
class EmbeddedServicesConfiguration {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedServicesConfiguration.class);

    static final String POSTGRES_BEAN = "embeddedPostgres";
    static final String BROKER_BEAN = "embeddedAmqpBroker";
    static final String MQTT_BEAN = "embeddedMqttBroker";

    /** Both services, started side by side (as the context is prepared: {@link EmbeddedServicesEarlyStart}). */
    static EmbeddedServicesStart start(EmbeddedProperties props) {
        return new EmbeddedServicesStart(
                () -> EmbeddedPostgresServer.start(props.dataDir(), props.postgresPort(), EmbeddedEnvironmentPostProcessor.DATABASE,
                        props.ephemeral()),
                () -> EmbeddedAmqpBroker.start(props.dataDir(), props.brokerPort(), EmbeddedEnvironmentPostProcessor.BROKER_USER,
                        EmbeddedEnvironmentPostProcessor.BROKER_USER, !props.ephemeral()));
    }

    @Bean(name = POSTGRES_BEAN, destroyMethod = "")
    EmbeddedPostgresServer embeddedPostgres(EmbeddedServicesStart services) throws Exception {
        return services.postgres();
    }

    @Bean(name = BROKER_BEAN, destroyMethod = "")
    EmbeddedAmqpBroker embeddedAmqpBroker(EmbeddedServicesStart services) throws Exception {
        return services.broker();
    }

    /**
     * Started before Camel's routes and stopped after them, as Camel starts and stops with the context's lifecycle
     * while this is a plain bean: the MQTT bridge's consumer (routes/mqtt.camel.yaml) finds it listening
     * and lets go of it first.
     */
    @Bean(name = MQTT_BEAN, destroyMethod = "close")
    @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "lockwatch.mqtt.enabled", matchIfMissing = true)
    EmbeddedMqttBroker embeddedMqttBroker(EmbeddedProperties props,
                                          // stopped before them, and before an ephemeral data directory is deleted
                                          EmbeddedServicesStart services,
                                          io.micrometer.core.instrument.MeterRegistry meters,
                                          org.springframework.beans.factory.ObjectProvider<io.lockwatch.devices.Devices> devices,
                                          @org.springframework.beans.factory.annotation.Value("${lockwatch.mqtt.bridge-secret}") String bridgeSecret,
                                          @org.springframework.beans.factory.annotation.Value("${lockwatch.ingest.device-auth:optional}") String deviceAuth)
            throws Exception {
        if (!deviceAuth.equals("optional") && !deviceAuth.equals("required")) {
            throw new IllegalStateException("lockwatch.ingest.device-auth is optional or required, not " + deviceAuth);
        }
        return EmbeddedMqttBroker.start(props.dataDir(), props.mqttPort(), !props.ephemeral(),
                new io.lockwatch.devices.MqttListenerAuth(devices::getObject, bridgeSecret, meters), deviceAuth.equals("optional"),
                io.micrometer.core.instrument.Counter.builder("lockwatch.readings.mqtt.retained")
                        .description("MQTT messages published retained: each counts once as it arrives; none is kept")
                        .register(meters));
    }

    /**
     * {@code mqtt} in health and in the readiness group: UP once the bridge is subscribed, so that a reading published
     * then is taken; DOWN before (at start, or while the bridge reconnects), when the listener refuses readings.
     */
    @Bean
    @org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "lockwatch.mqtt.enabled", matchIfMissing = true)
    org.springframework.boot.actuate.health.HealthIndicator mqttHealthIndicator(EmbeddedMqttBroker mqtt) {
        return () -> (mqtt.bridgeSubscribed() ? org.springframework.boot.actuate.health.Health.up()
                : org.springframework.boot.actuate.health.Health.down().withDetail("reason",
                        "the bridge into the readings exchange is not subscribed: readings are refused until it is"))
                .withDetail("listener", "tcp://127.0.0.1:" + mqtt.port())
                .build();
    }

    @Bean
    static AbstractDependsOnBeanFactoryPostProcessor dataSourcesDependOnEmbeddedPostgres() {
        return new AbstractDependsOnBeanFactoryPostProcessor(DataSource.class, POSTGRES_BEAN) { };
    }

    @Bean
    static AbstractDependsOnBeanFactoryPostProcessor amqpConnectionFactoriesDependOnEmbeddedBroker() {
        return new AbstractDependsOnBeanFactoryPostProcessor(
                org.springframework.amqp.rabbit.connection.ConnectionFactory.class, BROKER_BEAN) { };
    }

    /** An ephemeral data directory, deleted once both services have stopped; null: a lasting one, kept. */
    record EphemeralDataDirectory(Path dir) implements AutoCloseable {
        @Override
        public void close() {
            if (dir == null || !Files.exists(dir)) {
                return;
            }
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            } catch (IOException e) {
                log.warn("Could not delete the ephemeral data directory {}: {}", dir, e.toString());
            }
        }
    }
}
