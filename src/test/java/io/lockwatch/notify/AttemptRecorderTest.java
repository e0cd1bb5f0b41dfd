package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.lockwatch.notify.NotificationStore.Outcome;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.dao.DataIntegrityViolationException;

/** How the posters' attempts reach the store: together when they finish together, each on its own if need be. */
class AttemptRecorderTest {

    /** A store that keeps each call's attempts instead of writing them; the first call can be held. */
    static final class FakeStore extends NotificationStore {
        final List<List<UUID>> calls = new CopyOnWriteArrayList<>();
        final CountDownLatch firstMayFinish = new CountDownLatch(1);
        volatile UUID refused;
        /** The attempts the store says a newer notification waits behind. */
        final java.util.Set<UUID> successorsWaiting = java.util.concurrent.ConcurrentHashMap.newKeySet();

        FakeStore() {
            super(null, null, null);
        }

        @Override
        public java.util.Set<UUID> recordAttempts(List<FinishedAttempt> attempts) {
            calls.add(attempts.stream().map(a -> a.delivery().id()).toList());
            if (calls.size() == 1) {
                try {
                    firstMayFinish.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (attempts.stream().anyMatch(a -> a.delivery().id().equals(refused))) {
                throw new DataIntegrityViolationException("refused (test)");
            }
            return attempts.stream().map(a -> a.delivery().id()).filter(successorsWaiting::contains)
                    .collect(java.util.stream.Collectors.toSet());
        }
    }

    final FakeStore store = new FakeStore();
    final AttemptRecorder recorder = new AttemptRecorder(store, new SimpleMeterRegistry());

    @AfterEach
    void close() throws InterruptedException {
        store.firstMayFinish.countDown();
        recorder.close();
    }

    @Test
    void attemptsThatFinishWhileAGroupIsWrittenAreWrittenTogetherInTheNext() throws Exception {
        FinishedAttempt first = attempt();
        CompletableFuture<Void> firstRecorded = CompletableFuture.runAsync(() -> recorder.record(first));
        await().atMost(Duration.ofSeconds(10)).until(() -> store.calls.size() == 1);

        List<FinishedAttempt> later = List.of(attempt(), attempt(), attempt(), attempt(), attempt());
        List<CompletableFuture<Void>> laterRecorded = later.stream()
                .map(a -> CompletableFuture.runAsync(() -> recorder.record(a))).toList();
        await().atMost(Duration.ofSeconds(10)).until(() -> recorder.waiting() == later.size());
        assertThat(laterRecorded).as("each poster waits until its attempt is written").noneMatch(CompletableFuture::isDone);

        store.firstMayFinish.countDown();
        firstRecorded.get(10, TimeUnit.SECONDS);
        CompletableFuture.allOf(laterRecorded.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

        assertThat(store.calls).hasSize(2);
        assertThat(store.calls.get(1)).containsExactlyInAnyOrderElementsOf(ids(later));
    }

    @Test
    void aGroupThatFailsIsWrittenOneByOneAndOnlyTheFailingPosterGetsTheFailure() throws Exception {
        CompletableFuture<Void> holder = CompletableFuture.runAsync(() -> recorder.record(attempt()));
        await().atMost(Duration.ofSeconds(10)).until(() -> store.calls.size() == 1);
        FinishedAttempt bad = attempt();
        FinishedAttempt good = attempt();
        FinishedAttempt alsoGood = attempt();
        store.refused = bad.delivery().id();
        CompletableFuture<Void> badRecorded = CompletableFuture.runAsync(() -> recorder.record(bad));
        CompletableFuture<Void> goodRecorded = CompletableFuture.runAsync(() -> recorder.record(good));
        CompletableFuture<Void> alsoGoodRecorded = CompletableFuture.runAsync(() -> recorder.record(alsoGood));
        await().atMost(Duration.ofSeconds(10)).until(() -> recorder.waiting() == 3);

        store.firstMayFinish.countDown();
        holder.get(10, TimeUnit.SECONDS);
        goodRecorded.get(10, TimeUnit.SECONDS);
        alsoGoodRecorded.get(10, TimeUnit.SECONDS);
        assertThatThrownBy(() -> badRecorded.get(10, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(DataIntegrityViolationException.class);
        // the failed group of three, then each of them alone
        assertThat(store.calls.subList(1, store.calls.size())).hasSize(4)
                .contains(List.of(good.delivery().id()), List.of(alsoGood.delivery().id()), List.of(bad.delivery().id()));
    }

    @Test
    void eachPosterLearnsWhetherItsOwnAttemptHasASuccessorWaitingEvenInAGroup() throws Exception {
        CompletableFuture<Boolean> holder = CompletableFuture.supplyAsync(() -> recorder.record(attempt()));
        await().atMost(Duration.ofSeconds(10)).until(() -> store.calls.size() == 1);
        FinishedAttempt followed = attempt();
        FinishedAttempt last = attempt();
        store.successorsWaiting.add(followed.delivery().id());
        CompletableFuture<Boolean> followedRecorded = CompletableFuture.supplyAsync(() -> recorder.record(followed));
        CompletableFuture<Boolean> lastRecorded = CompletableFuture.supplyAsync(() -> recorder.record(last));
        await().atMost(Duration.ofSeconds(10)).until(() -> recorder.waiting() == 2);

        store.firstMayFinish.countDown();

        assertThat(holder.get(10, TimeUnit.SECONDS)).isFalse();
        assertThat(followedRecorded.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(lastRecorded.get(10, TimeUnit.SECONDS)).isFalse();
        assertThat(store.calls.get(1)).as("written together").hasSize(2);
    }

    /** So the claim that the first answered poster wakes sees the room of the whole group. */
    @Test
    void everyAttemptOfAGroupLetsGoBeforeAnyOfItsPostersIsAnswered() throws Exception {
        CompletableFuture<Boolean> holder = CompletableFuture.supplyAsync(() -> recorder.record(attempt()));
        await().atMost(Duration.ofSeconds(10)).until(() -> store.calls.size() == 1);
        List<String> seen = new CopyOnWriteArrayList<>();
        FinishedAttempt followed = attempt();
        store.successorsWaiting.add(followed.delivery().id());
        List<CompletableFuture<Void>> posters = new java.util.ArrayList<>();
        for (FinishedAttempt a : List.of(followed, attempt(), attempt())) {
            String id = a.delivery().id().toString();
            posters.add(CompletableFuture.runAsync(() -> {
                recorder.record(List.of(a), successorWaits -> seen.add("let go " + id + " " + successorWaits));
                seen.add("answered " + id);
            }));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> recorder.waiting() == 3);

        store.firstMayFinish.countDown();
        holder.get(10, TimeUnit.SECONDS);
        CompletableFuture.allOf(posters.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);

        assertThat(seen).hasSize(6);
        assertThat(seen.subList(0, 3)).allMatch(s -> s.startsWith("let go "))
                .contains("let go " + followed.delivery().id() + " true");
        assertThat(seen.subList(3, 6)).allMatch(s -> s.startsWith("answered "));
    }

    @Test
    void aClosedRecorderRefusesAttemptsInsteadOfLeavingThePosterWaiting() throws Exception {
        store.firstMayFinish.countDown();
        recorder.record(attempt());
        recorder.close();

        assertThatThrownBy(() -> recorder.record(attempt())).isInstanceOf(IllegalStateException.class);
        assertThat(store.calls).hasSize(1);
    }

    private static List<UUID> ids(List<FinishedAttempt> attempts) {
        return attempts.stream().map(a -> a.delivery().id()).toList();
    }

    private static FinishedAttempt attempt() {
        Delivery d = new Delivery(UUID.randomUUID(), UUID.randomUUID(), "http://127.0.0.1:9/hook", "secret", null, true,
                "TestSensor", "Room", "sensor.state_changed", 1, 0, 2, System.currentTimeMillis(), 1);
        return new FinishedAttempt(d, 204, null, System.currentTimeMillis(), 3, Outcome.DELIVERED, null);
    }
}
