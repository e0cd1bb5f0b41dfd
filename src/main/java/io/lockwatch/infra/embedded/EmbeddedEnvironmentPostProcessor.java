package io.lockwatch.infra.embedded;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import org.apache.commons.logging.Log;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.Profiles;

/**
 * On the {@code embedded} profile, decides where the embedded services will listen before any bean is
 * created, and points Spring's own {@code spring.datasource.*} and {@code spring.rabbitmq.*} at them, so that
 * everything downstream (Hikari, Flyway, Spring AMQP, Camel, health) is configured exactly as for external
 * services. The services themselves are started by {@link EmbeddedServicesConfiguration}.
 */
public class EmbeddedEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

    static final String PROFILE = "embedded";
    static final String PROPERTY_SOURCE = "lockwatchEmbeddedServices";
    static final String DATABASE = "lockwatch";
    static final String BROKER_USER = "guest";
    static final String BROKER_VHOST = "default";
    static final String READINESS_INCLUDE = "management.endpoint.health.group.readiness.include";

    private final Log log;

    public EmbeddedEnvironmentPostProcessor(DeferredLogFactory logs) {
        this.log = logs.getLog(EmbeddedEnvironmentPostProcessor.class);
    }

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment env, SpringApplication application) {
        if (!env.acceptsProfiles(Profiles.of(PROFILE)) || env.getPropertySources().contains(PROPERTY_SOURCE)) {
            return;
        }
        if (!env.getProperty("lockwatch.pipeline.enabled", Boolean.class, true)) {
            // refused before the embedded services start, not after
            throw new IllegalStateException("lockwatch.pipeline.enabled=false needs the external profile: the embedded "
                    + "default's broker and database are this process's own, so nothing else would apply its readings "
                    + "or post its webhooks");
        }
        Path dataDir = Path.of(env.getProperty("lockwatch.embedded.data-dir",
                System.getProperty("user.home") + "/.lockwatch"));
        if (env.getProperty("lockwatch.embedded.ephemeral", Boolean.class, false)) {
            dataDir = dataDir.resolve("ephemeral-" + UUID.randomUUID());
        }
        int pgPort = portOrFree(env.getProperty("lockwatch.embedded.postgres-port", Integer.class, 0));
        int brokerPort = portOrFree(env.getProperty("lockwatch.embedded.broker-port", Integer.class, 0));
        int mqttPort = mqttPort(env.getProperty("lockwatch.embedded.mqtt-port", Integer.class, MQTT_PORT));

        Map<String, Object> props = new HashMap<>();
        props.put("lockwatch.embedded.data-dir", dataDir.toAbsolutePath().normalize().toString());
        props.put("lockwatch.embedded.postgres-port", pgPort);
        props.put("lockwatch.embedded.broker-port", brokerPort);
        props.put("lockwatch.embedded.mqtt-port", mqttPort);
        // MQTT: the embedded listener, taken into the readings exchange by routes/mqtt.camel.yaml (Qpid has no MQTT
        // of its own, so nothing to bind)
        props.put("lockwatch.mqtt.broker-url", "tcp://127.0.0.1:" + mqttPort);
        props.put("lockwatch.mqtt.topic-exchange", "");
        boolean mqtt = env.getProperty("lockwatch.mqtt.enabled", Boolean.class, true);
        props.put("lockwatch.mqtt.bridge", mqtt);
        if (mqtt) {
            // not ready until the listener's readings are taken (EmbeddedServicesConfiguration's mqtt health)
            String include = env.getProperty(READINESS_INCLUDE, "readinessState");
            props.put(READINESS_INCLUDE, java.util.Arrays.asList(include.split("\\s*,\\s*")).contains("mqtt")
                    ? include : include + ",mqtt");
        }
        // what the bridge logs in to the listener with, made anew each run (io.lockwatch.devices.MqttListenerAuth)
        byte[] secret = new byte[24];
        new java.security.SecureRandom().nextBytes(secret);
        props.put("lockwatch.mqtt.bridge-secret", java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(secret));
        props.put("spring.datasource.url", "jdbc:postgresql://127.0.0.1:" + pgPort + "/" + DATABASE);
        props.put("spring.datasource.username", "postgres");
        props.put("spring.datasource.password", "");
        props.put("spring.rabbitmq.host", "127.0.0.1");
        props.put("spring.rabbitmq.port", brokerPort);
        props.put("spring.rabbitmq.username", BROKER_USER);
        props.put("spring.rabbitmq.password", BROKER_USER);
        props.put("spring.rabbitmq.virtual-host", BROKER_VHOST);
        // Highest precedence: an operator cannot half-configure the embedded services by accident.
        env.getPropertySources().addFirst(new MapPropertySource(PROPERTY_SOURCE, props));
    }

    /** MQTT's own port, which sensors and mosquitto_pub use unless told otherwise. */
    static final int MQTT_PORT = 1883;

    /**
     * The MQTT listener's port: the configured one (1883 by default) if it is free, as the README's examples expect;
     * if another process holds it (a RabbitMQ, a second lockwatch), a free one, logged, rather than no start at all.
     * 0: a free one (tests, run side by side).
     */
    int mqttPort(int configured) {
        if (configured <= 0 || free(configured)) {
            return portOrFree(configured);
        }
        int instead = portOrFree(0);
        log.info("lockwatch.embedded.mqtt-port " + configured + " is taken: the embedded MQTT listener listens on "
                + "tcp://127.0.0.1:" + instead + " instead");
        return instead;
    }

    /** Bound as the listener binds it (without SO_REUSEADDR, so a port in TIME_WAIT counts as taken). */
    static boolean free(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    /**
     * The configured port, or a free loopback port below the range the system hands out to outgoing connections.
     * The port is chosen here and bound seconds later, once the context starts the service; a port from that range
     * can be taken meanwhile by any client connection (a test's HTTP client once took the MQTT listener's).
     */
    private static final java.util.Set<Integer> HANDED_OUT = java.util.concurrent.ConcurrentHashMap.newKeySet();

    static int portOrFree(int configured) {
        if (configured > 0) {
            return configured;
        }
        int below = ephemeralRangeStart();
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 50 && below > 11_024; attempt++) {
            int port = random.nextInt(below - 10_000, below);
            // a port handed out before in this JVM may still be held, or closing, by an earlier context (tests)
            if (HANDED_OUT.contains(port)) {
                continue;
            }
            // bound as the services bind (without SO_REUSEADDR), so that a port whose last connections are still in
            // TIME_WAIT counts as taken: Moquette's listener could not bind it
            if (free(port)) {
                HANDED_OUT.add(port);
                return port;
            }
        }
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port for an embedded service", e);
        }
    }

    /** The first port of Linux's ephemeral range; 32768, its default, where the system does not say. */
    static int ephemeralRangeStart() {
        try {
            // read as a stream: Files.readString trusts the size procfs reports and returns one byte
            String range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim();
            return Integer.parseInt(range.split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }

    static Path ensureDirectory(Path dir) {
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
    }

    @Override
    public int getOrder() {
        // after ConfigDataEnvironmentPostProcessor, which resolves the active and default profiles
        return Ordered.LOWEST_PRECEDENCE;
    }
}
