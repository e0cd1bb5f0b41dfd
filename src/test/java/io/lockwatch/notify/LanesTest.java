package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/**
 * The lanes on a clock of the test's own: a bound of two requests in flight (least, first and most alike, so it does
 * not adapt here: LaneLimitTest has that), the circuit open after three failures for 30 s.
 */
class LanesTest {

    static final UUID A = UUID.fromString("00000000-0000-0000-0000-00000000000a");
    static final UUID B = UUID.fromString("00000000-0000-0000-0000-00000000000b");
    static final long MS = 1_000_000;

    final AtomicLong now = new AtomicLong(1_000_000);
    final Lanes lanes = new Lanes(2, 2, 2, Duration.ofSeconds(15), 3, 30_000, now::get);

    @Test
    void aLaneTakesAtMostItsLimitAndAFreedSlotIsTakenAgain() {
        assertThat(enter(lanes, A)).isTrue();
        assertThat(enter(lanes, A)).isTrue();
        assertThat(enter(lanes, A)).isFalse();
        assertThat(lanes.room(true)).containsExactly(entry(A, new Lanes.Room(0, 2)));
        // another client is not held back by a full one
        assertThat(enter(lanes, B)).isTrue();

        leave(A, true);
        assertThat(lanes.room(true)).contains(entry(A, new Lanes.Room(1, 1)));
        assertThat(enter(lanes, A)).isTrue();
    }

    @Test
    void aLaneGivenAllItAskedForHasMoreWorkAndOneGivenLessHasNone() {
        lanes.claimed(Map.of(A, new Lanes.Room(2, 0), B, new Lanes.Room(2, 0)), Map.of(A, 1, B, 2), Set.of(B), false);
        leave(A, true);
        leave(B, true);

        assertThat(lanes.hasWorkAndRoom(A)).as("given less than its room: nothing more is due").isFalse();
        assertThat(lanes.hasWorkAndRoom(B)).as("given all its room: more may be due").isTrue();
        assertThat(lanes.room(false)).as("a claim for the lanes with work and room")
                .containsExactly(entry(B, new Lanes.Room(1, 1)));

        lanes.workWaits(A);
        assertThat(lanes.hasWorkAndRoom(A)).as("a successor became due").isTrue();
    }

    @Test
    void newNotificationsOfAClientAreClaimedForItsLaneAloneAndAtOnce() {
        org.apache.camel.ProducerTemplate producer = org.mockito.Mockito.mock(org.apache.camel.ProducerTemplate.class);
        ClaimWakeUp wakeUps = new ClaimWakeUp(producer, lanes);
        wakeUps.takeLookEverywhere();

        wakeUps.lanesHaveWork(java.util.Set.of(A));

        assertThat(wakeUps.takeLookEverywhere()).as("the claim does not look everywhere").isFalse();
        assertThat(lanes.room(false)).as("it asks the lane of the client notified, one it never met before")
                .containsExactly(entry(A, new Lanes.Room(2, 0)));
        org.mockito.Mockito.verify(producer).sendBody(ClaimWakeUp.QUEUE, null);
    }

    /** The claim's statement may have looked before a successor became due: its coming back short says nothing then. */
    @Test
    void workThatWaitsWhileAClaimRunsIsNotLostWhenTheClaimComesBackShort() {
        lanes.workWaits(A);
        Map<UUID, Lanes.Room> room = lanes.room(false);
        lanes.workWaits(A);
        lanes.claimed(room, Map.of(), Set.of(), false);

        assertThat(lanes.hasWorkAndRoom(A)).isTrue();
        lanes.claimed(lanes.room(false), Map.of(), Set.of(), false);
        assertThat(lanes.hasWorkAndRoom(A)).as("a claim that looked after it and came back short").isFalse();
    }

    @Test
    void aClaimCutShortByTheInstanceLeavesItsLanesWithWork() {
        lanes.workWaits(A);
        lanes.claimed(Map.of(A, new Lanes.Room(2, 0), B, new Lanes.Room(2, 0)), Map.of(B, 1), Set.of(), true);

        assertThat(lanes.room(false)).containsOnly(entry(A, new Lanes.Room(2, 0)), entry(B, new Lanes.Room(1, 1)));
    }

    @Test
    void aFullLaneIsNotTakenForOneWithoutWork() {
        lanes.claimed(Map.of(A, new Lanes.Room(2, 0)), Map.of(A, 2), Set.of(A), false);
        // looking everywhere, the full lane asked with no room and was given nothing: it still has work
        lanes.claimed(Map.of(A, new Lanes.Room(0, 2)), Map.of(), Set.of(), false);
        leave(A, true);

        assertThat(lanes.hasWorkAndRoom(A)).isTrue();
    }

    /** A claim that looks everywhere gives each client with due work a new lane's room unless told otherwise. */
    @Test
    void lookingEverywhereALaneIdleAsANewOneIsLeftOut() {
        enter(lanes, A);
        enter(lanes, B);
        leave(B, true);

        assertThat(lanes.room(true)).as("A in use; B idle, as a new lane").containsOnly(entry(A, new Lanes.Room(1, 1)));
    }

    @Test
    void aLaneNotMetBeforeIsGivenTheFirstBound() {
        assertThat(lanes.roomOfANewLane()).isEqualTo(2);
        lanes.claimed(Map.of(), Map.of(A, 2), Set.of(A), false);
        assertThat(lanes.view(A)).isEqualTo(new Lanes.View("closed", 2, 2));
        assertThat(lanes.hasWorkAndRoom(A)).isFalse();
        leave(A, true);
        assertThat(lanes.hasWorkAndRoom(A)).as("given all it was asked for: more may be due").isTrue();
    }

    @Test
    void consecutiveFailuresOpenTheCircuitUntilItsTimeIsUpThenOneProbeAtATime() {
        fail(A, 2);
        assertThat(lanes.view(A).circuit()).isEqualTo("closed");
        fail(A, 1);
        assertThat(lanes.view(A).circuit()).isEqualTo("open");
        assertThat(lanes.notClosed()).isEqualTo(1);
        assertThat(lanes.room(true)).containsExactly(entry(A, new Lanes.Room(0, 0)));
        assertThat(enter(lanes, A)).isFalse();

        now.addAndGet(29_999);
        assertThat(enter(lanes, A)).isFalse();
        now.addAndGet(1);
        assertThat(lanes.view(A).circuit()).isEqualTo("half_open");
        assertThat(lanes.room(true)).containsExactly(entry(A, new Lanes.Room(1, 0)));
        assertThat(enter(lanes, A)).isTrue();
        // the probe is alone, though the lane's bound is two
        assertThat(enter(lanes, A)).isFalse();
        assertThat(lanes.room(true)).containsExactly(entry(A, new Lanes.Room(0, 1)));
    }

    @Test
    void aProbeThatFailsOpensTheCircuitAgainAndOneThatSucceedsClosesIt() {
        fail(A, 3);
        now.addAndGet(30_000);
        assertThat(enter(lanes, A)).isTrue();
        leave(A, false);
        assertThat(lanes.view(A).circuit()).isEqualTo("open");
        assertThat(enter(lanes, A)).isFalse();

        now.addAndGet(30_000);
        assertThat(enter(lanes, A)).isTrue();
        leave(A, true);
        assertThat(lanes.view(A).circuit()).isEqualTo("closed");
        assertThat(lanes.notClosed()).isZero();
        assertThat(enter(lanes, A)).isTrue();
        assertThat(enter(lanes, A)).isTrue();
    }

    @Test
    void aSuccessBetweenFailuresStartsTheCountAgain() {
        fail(A, 2);
        assertThat(enter(lanes, A)).isTrue();
        leave(A, true);
        fail(A, 2);
        assertThat(lanes.view(A).circuit()).isEqualTo("closed");
    }

    @Test
    void aSlotGivenBackCountsNeitherSuccessNorFailure() {
        fail(A, 2);
        assertThat(enter(lanes, A)).isTrue();
        assertThat(enter(lanes, A)).isTrue();
        lanes.giveBack(A);
        lanes.giveBack(A);
        assertThat(lanes.view(A).circuit()).isEqualTo("closed");
        assertThat(lanes.view(A).inFlight()).isZero();
        fail(A, 1);
        assertThat(lanes.view(A).circuit()).isEqualTo("open");
    }

    @Test
    void aClientNeverSeenIsClosedAndLeavingOrGivingBackForItChangesNothing() {
        leave(B, false);
        lanes.giveBack(B);
        assertThat(lanes.view(B).circuit()).isEqualTo("closed");
        assertThat(lanes.room(true)).isEmpty();
        assertThat(lanes.notClosed()).isZero();
        assertThat(lanes.view(B)).isEqualTo(new Lanes.View("closed", 2, 0));
    }

    @Test
    void aLanesBoundFollowsItsEndpoint() {
        Lanes adaptive = new Lanes(1, 4, 64, Duration.ofSeconds(15), 1000, 30_000, now::get);
        fullAndFast(adaptive, 200);
        assertThat(adaptive.view(A).concurrencyLimit()).as("fast 2xx with the lane full").isEqualTo(64);

        assertThat(enter(adaptive, A)).isTrue();
        adaptive.leave(A, false, LaneLimit.Signal.OVERLOADED, 20 * MS);
        assertThat(adaptive.view(A).concurrencyLimit()).as("one 503").isEqualTo(48);
    }

    /** One request of the client's lane, taken as a claim takes it: only with room. */
    private static boolean enter(Lanes lanes, UUID client) {
        Lanes.Room room = lanes.room(true).getOrDefault(client, new Lanes.Room(lanes.roomOfANewLane(), 0));
        if (room.room() <= 0) {
            return false;
        }
        lanes.claimed(Map.of(client, room), Map.of(client, 1), room.room() <= 1 ? Set.of(client) : Set.of(), false);
        return true;
    }

    @Test
    void aRequestOutsideTheClaimsWaitsForRoomAndPassesAnOpenCircuit() throws Exception {
        fail(A, 3);
        assertThat(lanes.view(A).circuit()).isEqualTo("open");
        assertThat(lanes.enterOutsideTheClaims(A, Duration.ZERO)).as("a ping, through an open circuit").isTrue();
        assertThat(lanes.enterOutsideTheClaims(A, Duration.ZERO)).isTrue();
        assertThat(lanes.enterOutsideTheClaims(A, Duration.ZERO)).as("the lane's bound").isFalse();

        java.util.concurrent.CompletableFuture<Boolean> waiting = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return lanes.enterOutsideTheClaims(A, Duration.ofSeconds(30));
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        lanes.giveBack(A);
        assertThat(waiting.get(30, java.util.concurrent.TimeUnit.SECONDS)).as("a freed slot is taken by the waiting one").isTrue();
        assertThat(lanes.view(A).inFlight()).isEqualTo(2);
    }

    @Test
    void aLanesBoundIsSharedAmongTheInstances() {
        Lanes shared = new Lanes(1, 4, 64, Duration.ofSeconds(15), 1000, 30_000, now::get);
        shared.shareAmong(3);
        fullAndFast(shared, 200);
        assertThat(shared.view(A).concurrencyLimit()).as("64 among three").isEqualTo(21);

        shared.shareAmong(1);
        fullAndFast(shared, 200);
        assertThat(shared.view(A).concurrencyLimit()).as("the others gone").isEqualTo(64);
        shared.shareAmong(100);
        assertThat(shared.view(A).concurrencyLimit()).as("never below the least").isEqualTo(1);
        assertThat(shared.roomOfANewLane()).isEqualTo(1);
    }

    /** {@code rounds} times, A's lane filled, then every request answered 2xx in 20 ms. */
    private static void fullAndFast(Lanes lanes, int rounds) {
        for (int i = 0; i < rounds; i++) {
            while (enter(lanes, A)) {
                // the lane full
            }
            while (lanes.view(A).inFlight() > 0) {
                lanes.leave(A, true, LaneLimit.Signal.TAKEN, 20 * MS);
            }
        }
    }

    private void leave(UUID client, boolean success) {
        lanes.leave(client, success, success ? LaneLimit.Signal.TAKEN : LaneLimit.Signal.OVERLOADED, MS);
    }

    private void fail(UUID client, int times) {
        for (int i = 0; i < times; i++) {
            assertThat(enter(lanes, client)).isTrue();
            leave(client, false);
        }
    }
}
