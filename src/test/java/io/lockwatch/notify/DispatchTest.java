package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.Test;

/** A request's webhook-id and body kind, as a receiver de-duplicating by it sees them. */
class DispatchTest {

    final UUID client = UUID.randomUUID();

    @Test
    void oneEventOfAClientThatDoesNotBatchIsKnownByItsOwnId() {
        Delivery d = delivery(1);
        Dispatch one = new Dispatch(List.of(d));
        assertThat(one.batched()).isFalse();
        assertThat(one.webhookId()).isEqualTo(d.id().toString());
    }

    @Test
    void aBatchHasAnIdOfItsOwnTheSameForTheSameEvents() {
        Delivery a = delivery(10);
        Delivery b = delivery(10);
        Dispatch batch = new Dispatch(List.of(a, b));
        assertThat(batch.batched()).isTrue();
        assertThat(batch.webhookId()).as("a retry of the same events").isEqualTo(new Dispatch(List.of(a, b)).webhookId())
                .isNotIn(a.id().toString(), b.id().toString())
                .isNotEqualTo(new Dispatch(List.of(a)).webhookId());
        assertThat(new Dispatch(List.of(a)).batched()).as("a client that batches gets an array even of one").isTrue();
        assertThatThrownBy(() -> new Dispatch(List.of())).isInstanceOf(IllegalArgumentException.class);
    }

    private Delivery delivery(int maxEventsPerRequest) {
        return new Delivery(UUID.randomUUID(), client, "http://127.0.0.1:9/hook", "whsec_x", null, true, "S1", "door",
                "sensor.state_changed", 1, 0, 1, System.currentTimeMillis(), 1, null, null, maxEventsPerRequest, false);
    }
}
