package io.lockwatch.adapters;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;

import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallback;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

/**
 * An adapter's subscription to its network's broker, whose messages are acknowledged to that broker only once their
 * readings are confirmed by the readings exchange, in the order they came, a batch at a time: what has arrived while
 * the last batch was being published is the next one. camel-paho (4.14) acknowledges each message as its route
 * returns, so it could take only one at a time, each waiting for its own confirm; here Paho's manual
 * acknowledgements let a batch share one confirm.
 * <p>
 * QoS 1, with a session the broker keeps across connections (cleanSession false): a message not acknowledged when a
 * connection went away is given again on the next connection of the session, and read again. Whether its reading was
 * published before cannot be told (an acknowledgement lost with the connection looks like none sent), so what is read
 * again must be harmless: a LoRaWAN reading has its frame's id, and again it is a duplicate; a Zigbee2MQTT or Shelly
 * message says no time and no id of its own, and read again it is timed anew, so its adapter takes one message at a
 * time ({@code mostAtOnce} 1): what is read again is then only the last message read, a repeat of the state it set,
 * never an older state after a newer one (a door that opened and closed opening again). One connection at a time,
 * each with its own client and worker: a lost connection, or a batch its route gave up on, ends it, and
 * {@link NetworkAdapter#leadOrFollow} makes the next (Paho's own reconnection would hand the old connection's
 * messages to the new one's acknowledgements).
 */
final class NetworkSubscription implements MqttCallback {

    /**
     * Where and as whom to subscribe, and to what.
     *
     * @param mostAtOnce messages in one batch at most: 1 for a network whose messages say no time and no id of their
     *                   own (above); else {@link #MOST_AT_ONCE}
     */
    record Settings(String brokerUrl, String clientId, String username, String password, String topic, int qos,
                    int mostAtOnce) {
    }

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(NetworkSubscription.class);
    /** Messages in one batch at most (the broker's in-flight window is usually smaller: Mosquitto's is 20). */
    static final int MOST_AT_ONCE = 500;
    private static final long WAIT_MILLIS = 10_000;
    /** Paho's connection attempt gives up before the wait for it does, so that no attempt outlives its client. */
    private static final int CONNECT_SECONDS = 5;

    private final String title;
    private final Settings settings;
    private final Consumer<List<NetworkMessage>> batches;
    private volatile Connection connection;

    /** One connection: its client, what arrived on it, its worker; ended as a whole. */
    private final class Connection {
        final MqttAsyncClient client;
        final BlockingQueue<NetworkMessage> arrived = new LinkedBlockingQueue<>(MOST_AT_ONCE * 4);
        final Thread worker;
        volatile boolean over;

        Connection(MqttAsyncClient client) {
            this.client = client;
            this.worker = new Thread(this::work, "adapter-" + settings.clientId());
            this.worker.setDaemon(true);
        }

        /** Batches of what has arrived, in order; each message acknowledged once its batch is through. */
        private void work() {
            List<NetworkMessage> batch = new ArrayList<>();
            while (!over) {
                try {
                    batch.add(arrived.take());
                    arrived.drainTo(batch, settings.mostAtOnce() - 1);
                    batches.accept(batch);
                    for (NetworkMessage m : batch) {
                        if (m.qos() > 0) {
                            client.messageArrivedComplete(m.id(), m.qos());
                        }
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (MqttException e) {
                    // the connection went: what was not acknowledged comes again on the next one
                    end("an acknowledgement could not be sent (" + e.getMessage() + ")");
                    return;
                } catch (Throwable e) {
                    // its route gave up (the service stopping, or a fault its error handling let through): not
                    // acknowledged, so given again on the next connection
                    end("a batch of " + batch.size() + " messages was not taken (" + e + ")");
                    return;
                } finally {
                    batch.clear();
                }
            }
        }

        void end(String why) {
            if (!over) {
                over = true;
                if (connection == this) {
                    log.info("{} adapter: {}; connecting again", title, why);
                }
            }
        }
    }

    /** @param batches takes a batch, in order, and returns once each of its readings is confirmed (or its defect logged) */
    NetworkSubscription(String title, Settings settings, Consumer<List<NetworkMessage>> batches) {
        this.title = title;
        this.settings = settings;
        this.batches = batches;
    }

    /** Connects and subscribes (throws if the broker cannot be reached), and starts taking batches. */
    synchronized void start() throws MqttException {
        if (connection != null) {
            return;
        }
        MqttAsyncClient c = new MqttAsyncClient(settings.brokerUrl(), settings.clientId(), new MemoryPersistence());
        c.setManualAcks(true);
        MqttConnectOptions options = new MqttConnectOptions();
        options.setCleanSession(false);
        options.setAutomaticReconnect(false);
        options.setConnectionTimeout(CONNECT_SECONDS);
        if (settings.username() != null && !settings.username().isEmpty()) {
            options.setUserName(settings.username());
            options.setPassword(settings.password() == null ? new char[0] : settings.password().toCharArray());
        }
        Connection next = new Connection(c);
        c.setCallback(this);
        connection = next;
        try {
            c.connect(options).waitForCompletion(WAIT_MILLIS);
            org.eclipse.paho.client.mqttv3.IMqttToken subscribed = c.subscribe(settings.topic(), settings.qos());
            subscribed.waitForCompletion(WAIT_MILLIS);
            int[] granted = subscribed.getGrantedQos();
            if (granted == null || granted.length == 0 || granted[0] == 0x80) {
                throw new MqttException(MqttException.REASON_CODE_SUBSCRIBE_FAILED);
            }
        } catch (MqttException e) {
            connection = null;
            close(c);
            throw e;
        }
        next.worker.start();
    }

    /** Ends the connection: what was not acknowledged the broker gives again to the session's next one. */
    synchronized void stop() {
        Connection c = connection;
        connection = null;
        if (c == null) {
            return;
        }
        c.over = true;
        c.worker.interrupt();
        try {
            c.worker.join(WAIT_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (c.worker.isAlive()) {
            // stuck where an interruption is not heard: it acknowledges on its own, closed client only, so nothing
            // of the next connection; the next connection's messages are read by the next worker alone
            log.warn("{} adapter: its worker did not end within {} s", title, WAIT_MILLIS / 1000);
        }
        close(c.client);
    }

    boolean running() {
        return connection != null;
    }

    /** Whether its connection has ended and must be made again. */
    boolean broken() {
        Connection c = connection;
        return c != null && c.over;
    }

    boolean connected() {
        Connection c = connection;
        return c != null && !c.over && c.client.isConnected();
    }

    private void close(MqttAsyncClient c) {
        c.setCallback(null);
        try {
            c.disconnectForcibly(0, 1000, true);
        } catch (MqttException e) {
            log.debug("MQTT disconnect failed", e);
        }
        try {
            c.close(true);
        } catch (MqttException e) {
            log.warn("{} adapter: its MQTT client did not close: {}", title, e.getMessage());
        }
    }

    @Override
    public void messageArrived(String topic, MqttMessage message) throws InterruptedException {
        Connection c = connection;
        NetworkMessage m = new NetworkMessage(topic, message.getPayload(), message.isRetained(), message.getId(),
                message.getQos());
        // a full queue holds the broker back (brokers do not always keep to an in-flight window), until the
        // connection ends: a worker held up for longer than the keep-alive (the readings exchange away) loses the
        // connection, and what was not acknowledged comes again on the next
        while (c != null && !c.over) {
            if (c.arrived.offer(m, 1, java.util.concurrent.TimeUnit.SECONDS)) {
                return;
            }
        }
        // not acknowledged: given again on the next connection
    }

    @Override
    public void connectionLost(Throwable cause) {
        Connection c = connection;
        if (c != null) {
            c.end("its broker's connection was lost (" + cause.getMessage() + ")");
        }
    }

    @Override
    public void deliveryComplete(IMqttDeliveryToken token) {
        // nothing is published to the network's broker
    }
}
