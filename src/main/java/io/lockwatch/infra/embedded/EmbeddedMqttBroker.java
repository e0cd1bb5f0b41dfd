package io.lockwatch.infra.embedded;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Properties;

import io.micrometer.core.instrument.Counter;
import io.moquette.BrokerConstants;
import io.moquette.broker.IRetainedRepository;
import io.moquette.broker.RetainedMessage;
import io.moquette.broker.Server;
import io.moquette.broker.config.MemoryConfig;
import io.moquette.broker.subscriptions.Topic;
import io.netty.handler.codec.mqtt.MqttPublishMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded default's MQTT 3.1.1 listener (Moquette), on loopback, so that sensors and {@code mosquitto_pub} can
 * publish readings with nothing installed; {@code routes/mqtt.camel.yaml} takes them into the readings exchange.
 * Its store is in the data directory unless ephemeral; the bridge's session is a clean one (docs/ARCHITECTURE.md).
 * <p>
 * It keeps no retained message: a reading is a moment, not a standing state. Moquette 0.17 hands a retained message
 * over again on every new subscription, and without the RETAIN flag the MQTT spec asks for, so each time the bridge
 * reconnected an old state was applied again as a new reading (a stale "open" over a newer "closed"); and it has no
 * setting to retain nothing. A message published retained still reaches the subscribed bridge at once, as any other,
 * and counts once ({@code lockwatch.readings.mqtt.retained} counts them). A client without a client id is given one
 * (MQTT 3.1.1 allows it for a clean session; {@code mosquitto_pub} 2.0 sends none).
 */
final class EmbeddedMqttBroker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedMqttBroker.class);

    private final Server server;

    private EmbeddedMqttBroker(Server server) {
        this.server = server;
    }

    /**
     * @param auth           who may log in, publish and subscribe (the registry's devices, the bridge)
     * @param allowAnonymous whether a client without a login is let in (lockwatch.ingest.device-auth optional)
     */
    public static EmbeddedMqttBroker start(Path dataDir, int port, boolean persistent,
                                           io.lockwatch.devices.MqttListenerAuth auth, boolean allowAnonymous,
                                           Counter retained) throws IOException {
        long started = System.nanoTime();
        Properties p = new Properties();
        p.setProperty(BrokerConstants.HOST_PROPERTY_NAME, "127.0.0.1");
        p.setProperty(BrokerConstants.PORT_PROPERTY_NAME, String.valueOf(port));
        p.setProperty(BrokerConstants.WEB_SOCKET_PORT_PROPERTY_NAME, BrokerConstants.DISABLED_PORT_BIND);
        // loopback only, like the embedded API with its documented token
        p.setProperty(BrokerConstants.ALLOW_ANONYMOUS_PROPERTY_NAME, String.valueOf(allowAnonymous));
        p.setProperty(BrokerConstants.ALLOW_ZERO_BYTE_CLIENT_ID_PROPERTY_NAME, "true");
        // Moquette reports usage to its authors by default: nothing leaves this machine
        p.setProperty(BrokerConstants.ENABLE_TELEMETRY_NAME, "false");
        p.setProperty(BrokerConstants.PERSISTENCE_ENABLED_PROPERTY_NAME, String.valueOf(persistent));
        p.setProperty(BrokerConstants.DATA_PATH_PROPERTY_NAME, EmbeddedEnvironmentPostProcessor
                .ensureDirectory(dataDir.resolve("mqtt")).toString() + "/");
        // as the AMQP broker: a message is read whole before any check
        p.setProperty(BrokerConstants.NETTY_MAX_BYTES_PROPERTY_NAME, String.valueOf(EmbeddedAmqpBroker.MAX_MESSAGE_BYTES));
        Server server = new Server();
        server.startServer(new MemoryConfig(p), null, null, auth, auth);
        // not on the listener's own thread, which is asking
        auth.disconnectWith(client -> java.util.concurrent.CompletableFuture.runAsync(() -> server.disconnectClient(client)));
        retainNothing(server, retained);
        log.info("Embedded MQTT 3.1.1 listener (Moquette) on tcp://127.0.0.1:{}: publish readings to "
                + "lockwatch/readings/<sensor id> (started in {} ms)", port, (System.nanoTime() - started) / 1_000_000);
        return new EmbeddedMqttBroker(server);
    }

    /**
     * Puts a store that keeps nothing in the place of Moquette's retained store (no API offers it: a private field of
     * its dispatcher, checked by MqttIngestTest). If Moquette's insides have changed, the listener does not start.
     */
    private static void retainNothing(Server server, Counter retained) {
        try {
            Object dispatcher = field(Server.class, "dispatcher").get(server);
            field(dispatcher.getClass(), "retainedRepository").set(dispatcher, new IRetainedRepository() {
                @Override
                public void cleanRetained(Topic topic) {
                }

                @Override
                public void retain(Topic topic, MqttPublishMessage msg) {
                    retained.increment();
                }

                @Override
                public boolean isEmpty() {
                    return true;
                }

                @Override
                public java.util.List<RetainedMessage> retainedOnTopic(String topic) {
                    return java.util.List.of();
                }
            });
        } catch (ReflectiveOperationException | RuntimeException e) {
            server.stopServer();
            throw new IllegalStateException("The MQTT listener's retained store could not be replaced (Moquette "
                    + "changed?): a retained message would come again as a new reading on every reconnection", e);
        }
    }

    private static java.lang.reflect.Field field(Class<?> type, String name) throws NoSuchFieldException {
        java.lang.reflect.Field f = type.getDeclaredField(name);
        f.setAccessible(true);
        return f;
    }

    @Override
    public void close() {
        server.stopServer();
    }
}
