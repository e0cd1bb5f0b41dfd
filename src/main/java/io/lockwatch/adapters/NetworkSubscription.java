package io.lockwatch.adapters;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;

import org.eclipse.paho.client.mqttv3.IMqttDeliveryToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttCallbackExtended;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

/**
 * An adapter's subscription to its network's broker, whose messages are acknowledged to that broker only once their
 * readings are confirmed by the readings exchange, in the order they came, a batch at a time: what has arrived while
 * the last batch was being published is the next one. camel-paho (4.14) acknowledges each message as its route
 * returns, so it could take only one at a time, each waiting for its own confirm (378 uplinks a second on this
 * project's machine); here Paho's manual acknowledgements let a batch share one confirm. QoS 1 with a session kept
 * across reconnections (cleanSession false) and reconnected to by Paho: a message not acknowledged when the
 * connection or the service went away is given again by the broker (a repeat, or a duplicate by its id). Batches go
 * through the adapter's route (routes/adapters.camel.yaml), whose error handling waits out a readings exchange away.
 */
final class NetworkSubscription implements MqttCallbackExtended {

    /** Where and as whom to subscribe, and to what. */
    record Settings(String brokerUrl, String clientId, String username, String password, String topic, int qos) {
    }

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(NetworkSubscription.class);
    /** Messages in one batch at most (the broker's in-flight window is usually smaller: Mosquitto's is 20). */
    static final int MOST_AT_ONCE = 500;
    private static final long WAIT_MILLIS = 10_000;

    private final String title;
    private final Settings settings;
    private final Consumer<List<NetworkMessage>> batches;
    /** Arrived, not yet taken into a batch; with QoS 1 bounded by the broker's window of unacknowledged messages. */
    private final BlockingQueue<NetworkMessage> arrived = new LinkedBlockingQueue<>(10_000);
    private volatile MqttAsyncClient client;
    private volatile Thread worker;
    /** A batch failed for good while running: its messages are neither taken nor given again until reconnected. */
    private volatile boolean broken;
    /** When its connection was lost and not made again since (System.nanoTime), or 0. */
    private volatile long lostAt;

    /** @param batches takes a batch, in order, and returns once each of its readings is confirmed (or its defect logged) */
    NetworkSubscription(String title, Settings settings, Consumer<List<NetworkMessage>> batches) {
        this.title = title;
        this.settings = settings;
        this.batches = batches;
    }

    /** Connects and subscribes (throws if the broker cannot be reached), and starts taking batches. */
    synchronized void start() throws MqttException {
        if (client != null) {
            return;
        }
        MqttAsyncClient c = new MqttAsyncClient(settings.brokerUrl(), settings.clientId(), new MemoryPersistence());
        c.setManualAcks(true);
        c.setCallback(this);
        MqttConnectOptions options = new MqttConnectOptions();
        options.setCleanSession(false);
        options.setAutomaticReconnect(true);
        // Paho waits up to 128 s between attempts by default: a door opened meanwhile would wait as long
        options.setMaxReconnectDelay(10_000);
        if (settings.username() != null && !settings.username().isEmpty()) {
            options.setUserName(settings.username());
            options.setPassword(settings.password() == null ? new char[0] : settings.password().toCharArray());
        }
        try {
            c.connect(options).waitForCompletion(WAIT_MILLIS);
            c.subscribe(settings.topic(), settings.qos()).waitForCompletion(WAIT_MILLIS);
        } catch (MqttException e) {
            close(c);
            throw e;
        }
        client = c;
        broken = false;
        lostAt = 0;
        Thread w = new Thread(this::work, "adapter-" + settings.clientId());
        w.setDaemon(true);
        worker = w;
        w.start();
    }

    /** Stops taking batches and disconnects; what was not acknowledged the broker gives again to the session. */
    synchronized void stop() {
        Thread w = worker;
        worker = null;
        if (w != null) {
            w.interrupt();
            try {
                w.join(WAIT_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        MqttAsyncClient c = client;
        client = null;
        if (c != null) {
            close(c);
        }
        arrived.clear();
    }

    boolean running() {
        return client != null;
    }

    /**
     * Whether it must be stopped and started again: a batch failed (the broker gives again only what a new connection
     * asks for), or Paho has not made its connection again within a minute (a reconnection that hangs).
     */
    boolean broken() {
        long lost = lostAt;
        return broken || (lost != 0 && System.nanoTime() - lost > 60_000_000_000L);
    }

    boolean connected() {
        MqttAsyncClient c = client;
        return c != null && c.isConnected();
    }

    private static void close(MqttAsyncClient c) {
        try {
            if (c.isConnected()) {
                c.disconnect().waitForCompletion(WAIT_MILLIS);
            }
        } catch (MqttException e) {
            log.debug("MQTT disconnect failed", e);
        }
        try {
            c.close(true);
        } catch (MqttException e) {
            log.debug("MQTT close failed", e);
        }
    }

    @Override
    public void messageArrived(String topic, MqttMessage message) throws InterruptedException {
        arrived.put(new NetworkMessage(topic, message.getPayload(), message.isRetained(), message.getId(), message.getQos()));
    }

    @Override
    public void connectComplete(boolean reconnect, String serverUri) {
        lostAt = 0;
        MqttAsyncClient c = client;
        if (reconnect && c != null) {
            // the session keeps the subscription; a broker that lost its sessions (restarted without persistence) not
            try {
                c.subscribe(settings.topic(), settings.qos());
            } catch (MqttException e) {
                log.warn("{} adapter: subscribing again after reconnecting failed: {}", title, e.getMessage());
            }
        }
    }

    @Override
    public void connectionLost(Throwable cause) {
        lostAt = System.nanoTime();
        log.info("{} adapter: its broker's connection was lost ({}); reconnecting", title, cause.getMessage());
    }

    @Override
    public void deliveryComplete(IMqttDeliveryToken token) {
        // nothing is published to the network's broker
    }

    /** Batches of what has arrived, in order; each message acknowledged once its batch is through. */
    private void work() {
        List<NetworkMessage> batch = new ArrayList<>();
        while (!Thread.currentThread().isInterrupted()) {
            try {
                batch.add(arrived.take());
                arrived.drainTo(batch, MOST_AT_ONCE - 1);
                batches.accept(batch);
                MqttAsyncClient c = client;
                for (NetworkMessage m : batch) {
                    if (m.qos() > 0 && c != null) {
                        try {
                            c.messageArrivedComplete(m.id(), m.qos());
                        } catch (MqttException e) {
                            // disconnected meanwhile: the broker gives it again, a repeat
                            log.debug("{} adapter: acknowledgement of message {} failed", title, m.id(), e);
                        }
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                // its route gave up (the service stopping, or a fault its error handling let through): not
                // acknowledged, so given again once connected again (NetworkAdapter.leadOrFollow restarts it)
                if (worker != null) {
                    log.warn("{} adapter: a batch of {} messages was not taken; connecting again for them: {}", title,
                            batch.size(), e.toString());
                    broken = true;
                }
                return;
            } finally {
                batch.clear();
            }
        }
    }
}
