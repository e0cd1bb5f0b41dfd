package io.lockwatch.infra.embedded;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lockwatch.devices.MqttListenerAuth;
import io.micrometer.core.instrument.Counter;
import io.moquette.BrokerConstants;
import io.moquette.broker.IRetainedRepository;
import io.moquette.broker.RetainedMessage;
import io.moquette.broker.Server;
import io.moquette.broker.config.MemoryConfig;
import io.moquette.broker.security.IAuthenticator;
import io.moquette.broker.security.IAuthorizatorPolicy;
import io.moquette.broker.subscriptions.ISubscriptionsDirectory;
import io.moquette.broker.subscriptions.Subscription;
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
 * <p>
 * A reading is taken only while the bridge is subscribed: MQTT drops a message nobody is subscribed to after it has
 * acknowledged it, so a reading published before the bridge's subscription (at start, or while it reconnects) would
 * be acknowledged and lost. The listener refuses it instead, as it refuses a device's publish for another's sensor:
 * no PUBACK and the connection closed, so the device sends it again. The service is not ready until the bridge is
 * subscribed (the bridge starts with Camel; {@code mqtt} in health and the readiness group), so that a publish once
 * it says it is ready is taken. Nobody but the bridge's login connects with the bridge's client id, which would
 * take its session over ({@link BridgeClientIdGuard}).
 */
final class EmbeddedMqttBroker implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedMqttBroker.class);

    private static final String READINGS = "lockwatch/readings/";
    /** Any readings topic: the bridge subscribes to all of them at once. */
    private static final Topic A_READINGS_TOPIC = new Topic(READINGS + "0");

    private final Server server;
    private final BridgeGate gate;
    private final int port;

    private EmbeddedMqttBroker(Server server, BridgeGate gate, int port) {
        this.server = server;
        this.gate = gate;
        this.port = port;
    }

    int port() {
        return port;
    }

    /** Whether a reading published now reaches the bridge, and so is taken. */
    boolean bridgeSubscribed() {
        return gate.bridgeSubscribedTo(A_READINGS_TOPIC);
    }

    /**
     * @param auth           who may log in, publish and subscribe (the registry's devices, the bridge)
     * @param allowAnonymous whether a client without a login is let in (lockwatch.ingest.device-auth optional)
     */
    public static EmbeddedMqttBroker start(Path dataDir, int port, boolean persistent,
                                           MqttListenerAuth auth, boolean allowAnonymous,
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
        BridgeGate gate = new BridgeGate(auth);
        server.startServer(new MemoryConfig(p), null, null, gate, gate);
        // not on the listener's own thread, which is asking
        java.util.function.Consumer<String> disconnect = client -> CompletableFuture.runAsync(() -> server.disconnectClient(client));
        auth.disconnectWith(disconnect);
        gate.disconnectWith(disconnect);
        guardTheBridgesClientId(server, auth);
        retainNothing(server, retained);
        gate.subscriptions(subscriptions(server));
        log.info("Embedded MQTT 3.1.1 listener (Moquette) on tcp://127.0.0.1:{}: publish readings to "
                + "lockwatch/readings/<sensor id> (started in {} ms)", port, (System.nanoTime() - started) / 1_000_000);
        return new EmbeddedMqttBroker(server, gate, port);
    }

    /**
     * Moquette's subscriptions, which it routes each publish by (no API offers them: a private field of its
     * dispatcher, as the retained store). If Moquette's insides have changed, the listener does not start.
     */
    private static ISubscriptionsDirectory subscriptions(Server server) {
        try {
            Object dispatcher = field(Server.class, "dispatcher").get(server);
            return (ISubscriptionsDirectory) field(dispatcher.getClass(), "subscriptions").get(dispatcher);
        } catch (ReflectiveOperationException | RuntimeException e) {
            server.stopServer();
            throw new IllegalStateException("The MQTT listener's subscriptions could not be read (Moquette changed?): "
                    + "readings published before the bridge subscribed would be acknowledged and lost", e);
        }
    }

    /**
     * The registry's rules ({@link MqttListenerAuth}), and before them: a reading is refused unless the bridge's
     * session is subscribed to its topic right now, asked of the same subscriptions Moquette routes the publish by.
     */
    static final class BridgeGate implements IAuthenticator, IAuthorizatorPolicy {

        private final MqttListenerAuth auth;
        private final AtomicBoolean refusalLogged = new AtomicBoolean();
        private volatile String bridgeClient;
        private volatile ISubscriptionsDirectory subscriptions;
        private volatile java.util.function.Consumer<String> disconnect = client -> { };

        BridgeGate(MqttListenerAuth auth) {
            this.auth = auth;
        }

        void subscriptions(ISubscriptionsDirectory subscriptions) {
            this.subscriptions = subscriptions;
        }

        void disconnectWith(java.util.function.Consumer<String> disconnect) {
            this.disconnect = disconnect;
        }

        @Override
        public boolean checkValid(String clientId, String username, byte[] password) {
            boolean ok = auth.checkValid(clientId, username, password);
            if (ok && MqttListenerAuth.BRIDGE_USER.equals(username)) {
                bridgeClient = clientId;
            }
            return ok;
        }

        @Override
        public boolean canWrite(Topic topic, String user, String client) {
            if (!MqttListenerAuth.BRIDGE_USER.equals(user) && topic.toString().startsWith(READINGS)) {
                if (!bridgeSubscribedTo(topic)) {
                    if (refusalLogged.compareAndSet(false, true)) {
                        log.info("A reading was published to the MQTT listener while its bridge into the readings "
                                + "exchange was not subscribed: refused, unacknowledged, so that the device sends it "
                                + "again (logged once until a reading is taken)");
                    }
                    disconnect.accept(client);
                    return false;
                }
                refusalLogged.set(false);
            }
            return auth.canWrite(topic, user, client);
        }

        @Override
        public boolean canRead(Topic topic, String user, String client) {
            return auth.canRead(topic, user, client);
        }

        boolean bridgeSubscribedTo(Topic topic) {
            String bridge = bridgeClient;
            ISubscriptionsDirectory directory = subscriptions;
            if (bridge == null || directory == null) {
                return false;
            }
            try {
                for (Subscription s : directory.matchWithoutQosSharpening(topic)) {
                    if (bridge.equals(s.getClientId())) {
                        return true;
                    }
                }
            } catch (RuntimeException notATopic) {
                // a QoS 0 publish's topic is not checked before this: one that is no topic reaches no one
            }
            return false;
        }
    }

    /**
     * Refuses the bridge's client id to anyone but the bridge's login ({@link MqttListenerAuth#mayConnectAs}). Moquette
     * asks its authenticator only of a client that sends a login: one without (anonymous, on loopback) would be let in
     * with any id, the bridge's too, and take its session over. So the check is a step of each connection's pipeline,
     * just before Moquette's own handler, in the one place Moquette puts a handler of a caller's there (its optional
     * metrics', a private field of its acceptor, read as each connection opens). If Moquette's insides have changed,
     * the listener does not start.
     */
    private static void guardTheBridgesClientId(Server server, MqttListenerAuth auth) {
        try {
            Object acceptor = field(Server.class, "acceptor").get(server);
            field(acceptor.getClass(), "metrics").set(acceptor, java.util.Optional.of(new BridgeClientIdGuard(auth)));
        } catch (ReflectiveOperationException | RuntimeException e) {
            server.stopServer();
            throw new IllegalStateException("The MQTT listener's connections could not be checked (Moquette changed?): "
                    + "anyone could connect with the bridge's client id and take its session over", e);
        }
    }

    /** A CONNECT with the bridge's client id but not its login is answered "identifier rejected" and closed. */
    @io.netty.channel.ChannelHandler.Sharable
    static final class BridgeClientIdGuard extends io.netty.channel.ChannelInboundHandlerAdapter {

        private final MqttListenerAuth auth;

        BridgeClientIdGuard(MqttListenerAuth auth) {
            this.auth = auth;
        }

        @Override
        public void channelRead(io.netty.channel.ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof io.netty.handler.codec.mqtt.MqttConnectMessage connect
                    && !auth.mayConnectAs(connect.payload().clientIdentifier(), connect.payload().userName())) {
                ctx.writeAndFlush(io.netty.handler.codec.mqtt.MqttMessageBuilders.connAck()
                                .returnCode(io.netty.handler.codec.mqtt.MqttConnectReturnCode.CONNECTION_REFUSED_IDENTIFIER_REJECTED)
                                .sessionPresent(false).build())
                        .addListener(io.netty.channel.ChannelFutureListener.CLOSE);
                return;
            }
            ctx.fireChannelRead(msg);
        }
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
        closeConnectionsAtOnce(server);
        server.stopServer();
    }

    /**
     * Moquette stops Netty's event loops with Netty's default grace: a 2 s quiet period in which no task may come,
     * 2 s of every stop. By then the bridge (Camel's consumer) has let go and nothing is left to hand over, so the loops
     * are stopped with no quiet period first; Moquette's own call then finds them stopping and waits for that alone.
     */
    private static void closeConnectionsAtOnce(Server server) {
        try {
            Object acceptor = field(Server.class, "acceptor").get(server);
            if (acceptor == null) {
                return;
            }
            for (String group : java.util.List.of("workerGroup", "bossGroup")) {
                Object loops = field(acceptor.getClass(), group).get(acceptor);
                if (loops instanceof io.netty.channel.EventLoopGroup g) {
                    g.shutdownGracefully(0, 2, java.util.concurrent.TimeUnit.SECONDS);
                }
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            // Moquette changed: its own stop, with Netty's grace, still stops it
            log.debug("The MQTT listener's event loops could not be stopped early ({}); stopping it Moquette's way", e.toString());
        }
    }
}
