package io.lockwatch.infra.embedded;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Properties;

import io.moquette.BrokerConstants;
import io.moquette.broker.Server;
import io.moquette.broker.config.MemoryConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded default's MQTT 3.1.1 listener (Moquette), on loopback, so that sensors and {@code mosquitto_pub} can
 * publish readings with nothing installed; {@code routes/mqtt.camel.yaml} takes them into the readings exchange.
 * Its store is in the data directory unless ephemeral; the bridge's session is a clean one (docs/ARCHITECTURE.md).
 */
final class EmbeddedMqttBroker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedMqttBroker.class);

    private final Server server;

    private EmbeddedMqttBroker(Server server) {
        this.server = server;
    }

    public static EmbeddedMqttBroker start(Path dataDir, int port, boolean persistent) throws IOException {
        long started = System.nanoTime();
        Properties p = new Properties();
        p.setProperty(BrokerConstants.HOST_PROPERTY_NAME, "127.0.0.1");
        p.setProperty(BrokerConstants.PORT_PROPERTY_NAME, String.valueOf(port));
        p.setProperty(BrokerConstants.WEB_SOCKET_PORT_PROPERTY_NAME, BrokerConstants.DISABLED_PORT_BIND);
        // loopback only, like the embedded API with its documented token
        p.setProperty(BrokerConstants.ALLOW_ANONYMOUS_PROPERTY_NAME, "true");
        // Moquette reports usage to its authors by default: nothing leaves this machine
        p.setProperty(BrokerConstants.ENABLE_TELEMETRY_NAME, "false");
        p.setProperty(BrokerConstants.PERSISTENCE_ENABLED_PROPERTY_NAME, String.valueOf(persistent));
        p.setProperty(BrokerConstants.DATA_PATH_PROPERTY_NAME, EmbeddedEnvironmentPostProcessor
                .ensureDirectory(dataDir.resolve("mqtt")).toString() + "/");
        // as the AMQP broker: a message is read whole before any check
        p.setProperty(BrokerConstants.NETTY_MAX_BYTES_PROPERTY_NAME, String.valueOf(EmbeddedAmqpBroker.MAX_MESSAGE_BYTES));
        Server server = new Server();
        server.startServer(new MemoryConfig(p));
        log.info("Embedded MQTT 3.1.1 listener (Moquette) on tcp://127.0.0.1:{}: publish readings to "
                + "lockwatch/readings/<sensor id> (started in {} ms)", port, (System.nanoTime() - started) / 1_000_000);
        return new EmbeddedMqttBroker(server);
    }

    @Override
    public void close() {
        server.stopServer();
    }
}
