package io.lockwatch.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

import io.moquette.broker.Server;
import io.moquette.BrokerConstants;
import io.moquette.broker.config.MemoryConfig;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

/**
 * A network's own MQTT broker (Zigbee2MQTT's, ChirpStack's) for the adapters' tests: a Moquette of its own on a free
 * loopback port, anonymous, its sessions in memory ({@link #onAFreePort}); or the Mosquitto of {@code scripts/services.sh}
 * with its user ({@link #mosquitto}). Stopped and started again on the same port to take it away.
 */
public final class NetworkBroker implements AutoCloseable {

    private final int port;
    private final Path data;
    private final String user;
    private Server server;

    private NetworkBroker(int port, Path data, String user) {
        this.port = port;
        this.data = data;
        this.user = user;
    }

    /** On a free port, not started yet ({@link #up}). */
    public static NetworkBroker onAFreePort() {
        try (ServerSocket free = new ServerSocket(0)) {
            return new NetworkBroker(free.getLocalPort(), Files.createTempDirectory("network-broker"), null);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The Mosquitto {@code scripts/services.sh up} started: 127.0.0.1:1884, user and password zigbee2mqtt. */
    public static NetworkBroker mosquitto() {
        return new NetworkBroker(1884, null, "zigbee2mqtt");
    }

    public String url() {
        return "tcp://127.0.0.1:" + port;
    }

    /** Its user (the same as the password), or null: anonymous. */
    public String user() {
        return user;
    }

    /** Started (again, after {@link #down}) on its port; already running, left so. */
    public synchronized void up() throws IOException {
        if (data == null) {
            run("up");
            return;
        }
        if (server != null) {
            return;
        }
        Properties p = new Properties();
        p.setProperty(BrokerConstants.HOST_PROPERTY_NAME, "127.0.0.1");
        p.setProperty(BrokerConstants.PORT_PROPERTY_NAME, String.valueOf(port));
        p.setProperty(BrokerConstants.WEB_SOCKET_PORT_PROPERTY_NAME, BrokerConstants.DISABLED_PORT_BIND);
        p.setProperty(BrokerConstants.ALLOW_ANONYMOUS_PROPERTY_NAME, "true");
        p.setProperty(BrokerConstants.ENABLE_TELEMETRY_NAME, "false");
        p.setProperty(BrokerConstants.PERSISTENCE_ENABLED_PROPERTY_NAME, "false");
        p.setProperty(BrokerConstants.DATA_PATH_PROPERTY_NAME, data + "/");
        server = new Server();
        server.startServer(new MemoryConfig(p));
    }

    /** Stopped: its clients disconnected, as a network's broker that went away. */
    public synchronized void down() {
        if (data == null) {
            run("down");
            return;
        }
        if (server != null) {
            server.stopServer();
            server = null;
        }
    }

    private static void run(String action) {
        try {
            Services.run(action, "mosquitto");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Publishes as the network's bridge would (QoS 1), on a connection of its own. */
    public void publish(String topic, String json) {
        try {
            MqttClient client = new MqttClient(url(), MqttClient.generateClientId(), new MemoryPersistence());
            MqttConnectOptions options = new MqttConnectOptions();
            options.setCleanSession(true);
            if (user != null) {
                options.setUserName(user);
                options.setPassword(user.toCharArray());
            }
            client.connect(options);
            try {
                client.publish(topic, json.getBytes(StandardCharsets.UTF_8), 1, false);
            } finally {
                client.disconnect();
                client.close();
            }
        } catch (org.eclipse.paho.client.mqttv3.MqttException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The in-process one stopped; the services' one left running. */
    @Override
    public void close() {
        if (data != null) {
            down();
        }
    }
}
