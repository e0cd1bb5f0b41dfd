package io.lockwatch.infra.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.MessageProperties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The embedded broker keeps a durable queue's persistent messages across its restart, unless it is ephemeral. */
class EmbeddedAmqpBrokerTest {

    @TempDir Path dataDir;

    /**
     * Hikari sets DriverManager's login timeout, JVM-wide, to its connection timeout (5 s): left by an earlier context in
     * this JVM, it would bound the broker's Derby store as it boots, which on a busy machine takes longer.
     */
    @org.junit.jupiter.api.BeforeEach
    void noLoginTimeoutLeftByAnEarlierContext() {
        java.sql.DriverManager.setLoginTimeout(0);
    }

    @Test
    void persistentMessagesOutliveARestartOfTheBroker() throws Exception {
        int port = freePort();
        try (EmbeddedAmqpBroker broker = EmbeddedAmqpBroker.start(dataDir, port, "guest", "guest", true)) {
            publish(port, "kept", "reading 1", "reading 2");
        }
        try (EmbeddedAmqpBroker broker = EmbeddedAmqpBroker.start(dataDir, port, "guest", "guest", true)) {
            assertThat(drain(port, "kept")).containsExactly("reading 1", "reading 2");
        }
    }

    @Test
    void anEphemeralBrokerStartsEmpty() throws Exception {
        int port = freePort();
        try (EmbeddedAmqpBroker broker = EmbeddedAmqpBroker.start(dataDir, port, "guest", "guest", false)) {
            publish(port, "gone", "reading 1");
            assertThat(drain(port, "gone")).containsExactly("reading 1");
            publish(port, "gone", "reading 2");
        }
        try (EmbeddedAmqpBroker broker = EmbeddedAmqpBroker.start(dataDir, port, "guest", "guest", false)) {
            try (Connection c = connect(port)) {
                Channel ch = c.createChannel();
                assertThatThrownBy(() -> ch.queueDeclarePassive("gone")).as("the queue itself is gone")
                        .isInstanceOf(java.io.IOException.class);
            }
        }
    }

    private static void publish(int port, String queue, String... bodies) throws Exception {
        try (Connection c = connect(port); Channel ch = c.createChannel()) {
            ch.queueDeclare(queue, true, false, false, null);
            ch.confirmSelect();
            for (String body : bodies) {
                ch.basicPublish("", queue, MessageProperties.PERSISTENT_BASIC, body.getBytes(StandardCharsets.UTF_8));
            }
            ch.waitForConfirmsOrDie(10_000);
        }
    }

    private static java.util.List<String> drain(int port, String queue) throws Exception {
        java.util.List<String> bodies = new java.util.ArrayList<>();
        try (Connection c = connect(port); Channel ch = c.createChannel()) {
            for (GetResponse r = ch.basicGet(queue, true); r != null; r = ch.basicGet(queue, true)) {
                bodies.add(new String(r.getBody(), StandardCharsets.UTF_8));
            }
        }
        return bodies;
    }

    private static Connection connect(int port) throws Exception {
        ConnectionFactory f = new ConnectionFactory();
        f.setHost("127.0.0.1");
        f.setPort(port);
        f.setVirtualHost(EmbeddedEnvironmentPostProcessor.BROKER_VHOST);
        return f.newConnection();
    }

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
