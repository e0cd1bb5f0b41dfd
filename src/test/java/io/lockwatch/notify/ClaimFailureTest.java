package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyCollection;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.dao.PessimisticLockingFailureException;

/**
 * A claim that fails after it took request slots (the database loses a deadlock while it puts back what it cannot
 * send now) gives them all back: the bench once found a client whose slots leaked that way, and it was never claimed
 * again until a restart. No database: the store is a stand-in that answers the claim and fails the put-back.
 */
class ClaimFailureTest {

    final UUID client = UUID.randomUUID();
    final ClientGates gates = new ClientGates(1, 5, 30_000, System::currentTimeMillis);
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    @Test
    void aClaimThatFailsWhenPuttingBackGivesItsSlotsBack() {
        NotificationStore store = mock(NotificationStore.class);
        // two due for one client with one slot: the first is taken, the second must be put back, which fails
        when(store.claim(anyInt(), any(), any())).thenReturn(List.of(delivery(), delivery()));
        doThrow(new PessimisticLockingFailureException("deadlock detected")).when(store).release(anyCollection(), any());
        Notifications notifications = new Notifications(store, mock(AttemptRecorder.class), gates, new TargetGuard(true),
                props(), meters, io.lockwatch.infra.tracing.Traces.off());

        assertThatThrownBy(notifications::claim).isInstanceOf(PessimisticLockingFailureException.class);

        assertThat(gates.closedClients()).as("clients closed to the next claim").doesNotContain(client);
        assertThat(meters.get("lockwatch.notifications.in.flight").gauge().value()).isZero();
        assertThat(gates.tryEnter(client)).as("the client's one slot is free").isTrue();
    }

    private Delivery delivery() {
        return new Delivery(UUID.randomUUID(), client, "http://127.0.0.1:9/hook", "whsec_x", null, true, "S1", "door",
                "sensor.state_changed", 1, 0, 1, System.currentTimeMillis(), 1);
    }

    private static NotifyProperties props() {
        return new NotifyProperties(Duration.ofSeconds(15), Duration.ofSeconds(5), List.of(Duration.ofSeconds(5)),
                Duration.ofHours(24), Duration.ofSeconds(1), 64, 1, 5, Duration.ofSeconds(30), true, null,
                Duration.ofDays(5), Duration.ofHours(24));
    }
}
