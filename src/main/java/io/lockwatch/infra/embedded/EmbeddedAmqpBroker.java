package io.lockwatch.infra.embedded;

import java.lang.reflect.Field;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.qpid.server.SystemLauncher;
import org.apache.qpid.server.SystemLauncherListener;
import org.apache.qpid.server.model.Broker;
import org.apache.qpid.server.model.SystemConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Apache Qpid Broker-J, in process, speaking AMQP 0-9-1 on a loopback port. Its messages are kept in a Derby store in
 * the data directory, so readings queued while the service is down are applied when it starts again; an ephemeral
 * data directory (tests) keeps them in memory instead. Production runs against RabbitMQ.
 */
public final class EmbeddedAmqpBroker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedAmqpBroker.class);
    private static final String INITIAL_CONFIG = "/infra/qpid-initial-config.json";
    /** The same but for its virtual host node: Qpid reads a node's type before it resolves context variables. */
    private static final String INITIAL_CONFIG_IN_MEMORY = "/infra/qpid-initial-config-memory.json";
    /** The largest message the broker takes; larger ones are refused at publish. */
    public static final int MAX_MESSAGE_BYTES = 128 * 1024;

    private final SystemLauncher launcher;

    private EmbeddedAmqpBroker(SystemLauncher launcher) {
        this.launcher = launcher;
    }

    /** @param persistent messages kept in the data directory across restarts, else in memory */
    public static EmbeddedAmqpBroker start(Path dataDir, int port, String user, String password, boolean persistent)
            throws Exception {
        long started = System.nanoTime();
        // Derby (the message store) writes derby.log into the working directory unless told where: into the log instead
        if (System.getProperty("derby.stream.error.method") == null && System.getProperty("derby.stream.error.file") == null) {
            System.setProperty("derby.stream.error.method", "org.apache.qpid.server.store.derby.DerbyUtils.getDerbyLogWriter");
        }
        // Qpid reads its defaults from classpath: URLs, whose handler the JDK finds on the system class path only, not
        // in the packaged jar's nested ones; Tomcat's JVM-wide handler factory (which the web server installs anyway)
        // resolves them by the thread's class loader. Installed here, as the broker may start before the web server.
        org.apache.catalina.webresources.TomcatURLStreamHandlerFactory.getInstance();
        AtomicReference<SystemConfig<?>> systemConfig = new AtomicReference<>();
        SystemLauncher launcher = new SystemLauncher(new SystemLauncherListener.DefaultSystemLauncherListener() {
            @Override
            public void onContainerResolve(SystemConfig<?> config) {
                systemConfig.set(config);
            }
        });
        Map<String, String> context = new HashMap<>();
        context.put("qpid.amqp_port", String.valueOf(port));
        // as RabbitMQ's max_message_size (scripts/services.sh): messages are read whole before the size check
        context.put("qpid.max_message_size", String.valueOf(MAX_MESSAGE_BYTES));
        context.put("lockwatch.broker.user", user);
        context.put("lockwatch.broker.password", password);
        context.put("qpid.work_dir", EmbeddedEnvironmentPostProcessor.ensureDirectory(dataDir.resolve("qpid")).toString());

        Map<String, Object> attributes = new HashMap<>();
        attributes.put(SystemConfig.TYPE, "Memory");
        attributes.put(SystemConfig.INITIAL_CONFIGURATION_LOCATION,
                EmbeddedAmqpBroker.class.getResource(persistent ? INITIAL_CONFIG : INITIAL_CONFIG_IN_MEMORY).toExternalForm());
        attributes.put(SystemConfig.STARTUP_LOGGED_TO_SYSTEM_OUT, false);
        attributes.put(SystemConfig.CONTEXT, context);
        launcher.startup(attributes);
        removeBrokerShutdownHook(systemConfig.get());
        log.info("Embedded AMQP 0-9-1 broker (Qpid Broker-J) listening on amqp://127.0.0.1:{} (started in {} ms)",
                port, (System.nanoTime() - started) / 1_000_000);
        return new EmbeddedAmqpBroker(launcher);
    }

    /**
     * Qpid closes itself from a JVM shutdown hook, racing Spring's own hook: on Ctrl-C the broker would go
     * away while Camel is still draining its consumers. The Spring context stops it instead, last.
     */
    private static void removeBrokerShutdownHook(SystemConfig<?> systemConfig) {
        if (systemConfig == null) {
            return;
        }
        Broker<?> broker = systemConfig.getContainer(Broker.class);
        try {
            // declared by BrokerImpl, of which the container is a subclass
            Field hookField = org.springframework.util.ReflectionUtils.findField(broker.getClass(), "_shutdownHook");
            if (hookField == null) {
                throw new NoSuchFieldException("_shutdownHook in " + broker.getClass().getName() + " and its superclasses");
            }
            hookField.setAccessible(true);
            Runtime.getRuntime().removeShutdownHook((Thread) hookField.get(broker));
        } catch (ReflectiveOperationException | RuntimeException e) {
            log.warn("Could not remove the Qpid shutdown hook ({}); on exit the broker may stop before the service", e.toString());
        }
    }

    @Override
    public void close() {
        launcher.shutdown();
        log.info("Embedded AMQP broker stopped");
    }
}
