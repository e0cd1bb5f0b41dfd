package io.lockwatch.bench;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.eclipse.paho.client.mqttv3.IMqttActionListener;
import org.eclipse.paho.client.mqttv3.IMqttToken;
import org.eclipse.paho.client.mqttv3.MqttAsyncClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttException;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

/**
 * Publishes readings as MQTT sensors do, to {@code lockwatch/readings/<sensor id>} with QoS 1, through RabbitMQ's
 * MQTT plugin: one client, at most a window of unacknowledged publishes (PUBACK) at a time, as the AMQP publisher
 * waits for confirms. A user {@code vhost:user} logs into the benchmark's virtual host.
 */
final class MqttPublisher implements ReadingPublisher {

    private static final Duration ACK_TIMEOUT = Duration.ofSeconds(60);

    private final MqttAsyncClient client;
    private final int maxOutstanding;
    private final Semaphore window;
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final IMqttActionListener settle = new IMqttActionListener() {
        @Override
        public void onSuccess(IMqttToken token) {
            window.release();
        }

        @Override
        public void onFailure(IMqttToken token, Throwable cause) {
            failed.incrementAndGet();
            window.release();
        }
    };

    MqttPublisher(String brokerUrl, String vhost, String user, String password, int maxOutstanding)
            throws MqttException {
        this.maxOutstanding = maxOutstanding;
        this.window = new Semaphore(maxOutstanding);
        this.client = new MqttAsyncClient(brokerUrl, "lockwatch-bench-" + System.nanoTime(), new MemoryPersistence());
        MqttConnectOptions options = new MqttConnectOptions();
        options.setCleanSession(true);
        options.setMaxInflight(maxOutstanding);
        options.setUserName(vhost + ":" + user);
        options.setPassword(password.toCharArray());
        client.connect(options).waitForCompletion(ACK_TIMEOUT.toMillis());
    }

    @Override
    public void publish(ReadingSource.Message message) throws IOException, InterruptedException {
        if (!window.tryAcquire(ACK_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            throw new IOException("no PUBACK from the broker for " + ACK_TIMEOUT.toSeconds() + " s");
        }
        MqttMessage m = new MqttMessage(message.body());
        m.setQos(1);
        try {
            client.publish("lockwatch/readings/" + message.routingKey(), m, null, settle);
        } catch (MqttException e) {
            window.release();
            throw new IOException("MQTT publish failed: " + e, e);
        }
        published.incrementAndGet();
    }

    @Override
    public void awaitConfirms() throws IOException, InterruptedException {
        if (!window.tryAcquire(maxOutstanding, ACK_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            throw new IOException((maxOutstanding - window.availablePermits()) + " publishes still unacknowledged after "
                    + ACK_TIMEOUT.toSeconds() + " s");
        }
        window.release(maxOutstanding);
    }

    @Override
    public long published() {
        return published.get();
    }

    @Override
    public long nacked() {
        return failed.get();
    }

    @Override
    public void close() throws MqttException {
        client.disconnect().waitForCompletion(ACK_TIMEOUT.toMillis());
        client.close();
    }
}
