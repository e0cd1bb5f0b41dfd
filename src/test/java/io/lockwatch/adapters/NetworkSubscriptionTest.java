package io.lockwatch.adapters;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import io.lockwatch.testing.NetworkBroker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An adapter's subscription acknowledges a message to the network's broker only once its batch went through: a batch
 * that failed is given again by the broker, in order, once the subscription connects again; one that went through
 * is not. Against a Moquette of the test's own, with a persistent session.
 */
class NetworkSubscriptionTest {

    private final NetworkBroker broker = NetworkBroker.onAFreePort();
    private final List<String> taken = new CopyOnWriteArrayList<>();
    private final AtomicBoolean failNext = new AtomicBoolean();
    private final NetworkSubscription subscription = new NetworkSubscription("test", new NetworkSubscription.Settings(
            broker.url(), "lockwatch-subscription-test", null, null, "doors/#", 1, NetworkSubscription.MOST_AT_ONCE), batch -> {
                if (failNext.compareAndSet(true, false)) {
                    throw new IllegalStateException("the readings exchange gave up");
                }
                batch.forEach(m -> taken.add(m.text()));
            });

    @AfterEach
    void stop() {
        subscription.stop();
        broker.close();
    }

    @Test
    void aBatchThatFailedIsGivenAgainInOrderAndOneThatWentThroughIsNot() throws Exception {
        broker.up();
        subscription.start();
        broker.publish("doors/a", "{\"n\":1}");
        await().atMost(Duration.ofSeconds(10)).until(() -> taken.contains("{\"n\":1}"));

        failNext.set(true);
        broker.publish("doors/a", "{\"n\":2}");
        await().atMost(Duration.ofSeconds(10)).until(subscription::broken);
        broker.publish("doors/a", "{\"n\":3}");
        assertThat(taken).containsExactly("{\"n\":1}");

        // as NetworkAdapter.leadOrFollow does with a broken one: connected again, the session's unacknowledged given again
        subscription.stop();
        subscription.start();
        await().atMost(Duration.ofSeconds(10)).until(() -> taken.contains("{\"n\":3}"));
        assertThat(taken).as("2 again, before 3; 1 not again").containsExactly("{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
    }
}
