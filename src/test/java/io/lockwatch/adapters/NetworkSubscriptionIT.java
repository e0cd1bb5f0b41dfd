package io.lockwatch.adapters;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lockwatch.testing.NetworkBroker;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A message whose reading was published when the connection went, before its acknowledgement could: Mosquitto
 * ({@code scripts/services.sh up}) gives it again on the session's next connection. Taken one at a time, as a
 * Zigbee2MQTT adapter takes them, what is read again is only the last message read: an older state is never read
 * after a newer one (read again and timed anew, a Zigbee2MQTT "open" would be newer than the "closed" after it).
 * (Moquette, the unit tests' broker, gives nothing again: hence against Mosquitto.)
 */
class NetworkSubscriptionIT {

    private static final String ID = "lockwatch-subscription-it";
    private final NetworkBroker broker = NetworkBroker.mosquitto();
    private final List<String> taken = new CopyOnWriteArrayList<>();
    private final AtomicBoolean takeOverAfterNext = new AtomicBoolean();
    private final NetworkSubscription subscription = new NetworkSubscription("test", new NetworkSubscription.Settings(
            broker.url(), ID, broker.user(), broker.user(), "doors-it/#", 1, 1), batch -> {
                batch.forEach(m -> taken.add(m.text()));
                if (takeOverAfterNext.compareAndSet(true, false)) {
                    // published; the connection goes before the acknowledgement can
                    takeOverTheSession();
                    await().atMost(Duration.ofSeconds(10)).until(() -> !subscriptionConnected());
                }
            });

    private boolean subscriptionConnected() {
        return subscription.connected();
    }

    /** Another connection of the session's client id, which the broker prefers, leaving without acknowledging. */
    private void takeOverTheSession() {
        try {
            MqttClient other = new MqttClient(broker.url(), ID, new MemoryPersistence());
            other.setManualAcks(true);
            MqttConnectOptions options = new MqttConnectOptions();
            options.setCleanSession(false);
            options.setUserName(broker.user());
            options.setPassword(broker.user().toCharArray());
            other.connect(options);
            other.disconnect();
            other.close();
        } catch (org.eclipse.paho.client.mqttv3.MqttException e) {
            throw new IllegalStateException(e);
        }
    }

    @AfterEach
    void stop() {
        subscription.stop();
    }

    @Test
    void oneAtATimeWhatIsReadAgainIsOnlyTheLastMessageRead() throws Exception {
        broker.up();
        subscription.start();
        takeOverAfterNext.set(true);
        broker.publish("doors-it/a", "{\"contact\":false}");
        broker.publish("doors-it/a", "{\"contact\":true}");
        await().atMost(Duration.ofSeconds(10)).until(subscription::broken);

        subscription.stop();
        subscription.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> taken.contains("{\"contact\":true}"));
        assertThat(taken.stream().filter("{\"contact\":false}"::equals).count())
                .as("given again: its acknowledgement went with the connection (%s)", taken).isEqualTo(2);
        assertThat(taken.lastIndexOf("{\"contact\":false}")).as("open never after closed: %s", taken)
                .isLessThan(taken.indexOf("{\"contact\":true}"));
    }
}
