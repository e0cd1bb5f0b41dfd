package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/** The per-client gates on a clock of the test's own: two requests in flight, open after three failures for 30 s. */
class ClientGatesTest {

    static final UUID A = UUID.fromString("00000000-0000-0000-0000-00000000000a");
    static final UUID B = UUID.fromString("00000000-0000-0000-0000-00000000000b");

    final AtomicLong now = new AtomicLong(1_000_000);
    final ClientGates gates = new ClientGates(2, 3, 30_000, now::get);

    @Test
    void aClientTakesAtMostItsShareOfRequestsAndAFreedSlotIsTakenAgain() {
        assertThat(gates.tryEnter(A)).isTrue();
        assertThat(gates.tryEnter(A)).isTrue();
        assertThat(gates.tryEnter(A)).isFalse();
        assertThat(gates.closedClients()).containsExactly(A);
        // another client is not held back by a full one
        assertThat(gates.tryEnter(B)).isTrue();

        gates.leave(A, true);
        assertThat(gates.closedClients()).isEmpty();
        assertThat(gates.tryEnter(A)).isTrue();
    }

    @Test
    void consecutiveFailuresOpenTheCircuitUntilItsTimeIsUpThenOneProbeAtATime() {
        fail(A, 2);
        assertThat(gates.circuit(A)).isEqualTo("closed");
        fail(A, 1);
        assertThat(gates.circuit(A)).isEqualTo("open");
        assertThat(gates.notClosed()).isEqualTo(1);
        assertThat(gates.closedClients()).containsExactly(A);
        assertThat(gates.tryEnter(A)).isFalse();

        now.addAndGet(29_999);
        assertThat(gates.tryEnter(A)).isFalse();
        now.addAndGet(1);
        assertThat(gates.circuit(A)).isEqualTo("half_open");
        assertThat(gates.tryEnter(A)).isTrue();
        // the probe is alone, though the client's share is two
        assertThat(gates.tryEnter(A)).isFalse();
        assertThat(gates.closedClients()).containsExactly(A);
    }

    @Test
    void aProbeThatFailsOpensTheCircuitAgainAndOneThatSucceedsClosesIt() {
        fail(A, 3);
        now.addAndGet(30_000);
        assertThat(gates.tryEnter(A)).isTrue();
        gates.leave(A, false);
        assertThat(gates.circuit(A)).isEqualTo("open");
        assertThat(gates.tryEnter(A)).isFalse();

        now.addAndGet(30_000);
        assertThat(gates.tryEnter(A)).isTrue();
        gates.leave(A, true);
        assertThat(gates.circuit(A)).isEqualTo("closed");
        assertThat(gates.notClosed()).isZero();
        assertThat(gates.tryEnter(A)).isTrue();
        assertThat(gates.tryEnter(A)).isTrue();
    }

    @Test
    void aSuccessBetweenFailuresStartsTheCountAgain() {
        fail(A, 2);
        assertThat(gates.tryEnter(A)).isTrue();
        gates.leave(A, true);
        fail(A, 2);
        assertThat(gates.circuit(A)).isEqualTo("closed");
    }

    @Test
    void aSlotGivenBackCountsNeitherSuccessNorFailure() {
        fail(A, 2);
        assertThat(gates.tryEnter(A)).isTrue();
        assertThat(gates.tryEnter(A)).isTrue();
        gates.giveBack(A);
        gates.giveBack(A);
        assertThat(gates.circuit(A)).isEqualTo("closed");
        fail(A, 1);
        assertThat(gates.circuit(A)).isEqualTo("open");
    }

    @Test
    void aClientNeverSeenIsClosedAndLeavingOrGivingBackForItChangesNothing() {
        gates.leave(B, false);
        gates.giveBack(B);
        assertThat(gates.circuit(B)).isEqualTo("closed");
        assertThat(gates.closedClients()).isEmpty();
        assertThat(gates.notClosed()).isZero();
    }

    private void fail(UUID client, int times) {
        for (int i = 0; i < times; i++) {
            assertThat(gates.tryEnter(client)).isTrue();
            gates.leave(client, false);
        }
    }
}
