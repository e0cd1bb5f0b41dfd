package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyBoolean;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyMap;
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
 * A claim that fails after it took request slots (the database loses a deadlock while it cancels a notification of
 * an unlinked client) gives them all back: the bench once found a client whose slots leaked that way, and it was never
 * claimed again until a restart. No database: the store is a stand-in that answers the claim and fails the cancel.
 */
class ClaimFailureTest {

    final UUID client = UUID.randomUUID();
    final Lanes lanes = new Lanes(1, 2, 2, Duration.ofSeconds(15), 5, 30_000, System::currentTimeMillis);
    final SimpleMeterRegistry meters = new SimpleMeterRegistry();

    @Test
    void aClaimThatFailsWhenCancellingGivesItsSlotsBack() throws InterruptedException {
        NotificationStore store = mock(NotificationStore.class);
        // a lane of two: the first is to be posted, the second (unlinked) cancelled, which fails
        when(store.claim(anyMap(), anyBoolean(), anyInt(), anyInt(), any())).thenReturn(List.of(delivery(true), delivery(false)));
        doThrow(new PessimisticLockingFailureException("deadlock detected")).when(store).cancel(any());
        ClaimWakeUp wakeUps = mock(ClaimWakeUp.class);
        when(wakeUps.takeLookEverywhere()).thenReturn(true);
        Notifications notifications = new Notifications(store, mock(AttemptRecorder.class), lanes, wakeUps,
                Duration.ofSeconds(15), new TargetGuard(true), props(), meters, io.lockwatch.infra.tracing.Traces.off());

        assertThatThrownBy(notifications::claim).isInstanceOf(PessimisticLockingFailureException.class);

        assertThat(lanes.view(client).inFlight()).as("the lane's requests in flight").isZero();
        assertThat(meters.get("lockwatch.notifications.in.flight").gauge().value()).isZero();
        assertThat(lanes.enterOutsideTheClaims(client, Duration.ZERO)).as("the lane's first slot is free").isTrue();
        assertThat(lanes.enterOutsideTheClaims(client, Duration.ZERO)).as("and its second").isTrue();
    }

    private Delivery delivery(boolean linked) {
        return new Delivery(UUID.randomUUID(), client, "http://127.0.0.1:9/hook", "whsec_x", null, linked, "S1", "door",
                "sensor.state_changed", 1, 0, 1, System.currentTimeMillis(), 1);
    }

    private static NotifyProperties props() {
        return new NotifyProperties(Duration.ofSeconds(15), Duration.ofSeconds(5), List.of(Duration.ofSeconds(5)),
                Duration.ofHours(24), Duration.ofSeconds(1), 64, new NotifyProperties.Lane(1, 2, 2), 5,
                Duration.ofSeconds(30), true, null, Duration.ofDays(5), Duration.ofHours(24), Duration.ofDays(7));
    }
}
