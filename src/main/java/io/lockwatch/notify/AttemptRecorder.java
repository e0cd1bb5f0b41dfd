package io.lockwatch.notify;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Records finished attempts in shared transactions (a group commit). Each poster hands its attempt over and waits
 * until the transaction that holds it has committed, so that an attempt is recorded before its request slot is
 * freed, as when each poster wrote its own. But the attempts that finish together cost one transaction instead of
 * one each: its round trips, its commit and its connection. One writer: while it commits a group, the next one
 * gathers, so the busier the posters, the larger the groups. A group is at most as large as there are posters.
 * <p>
 * Once a group has committed, every attempt of it lets go of what it held ({@code whenCommitted}: its lane's slot)
 * before any of its posters is answered. So a lane whose requests finished together is claimed for once, with the
 * room of all of them, rather than once for each as each poster in turn wakes the claim.
 * <p>
 * A group that fails is written again one attempt at a time, so that one attempt's failure is not the others'. A
 * poster whose attempt could not be written gets the failure, and the error handler tries again (a database that
 * is away is waited out).
 */
class AttemptRecorder implements AutoCloseable {

    /**
     * The attempts of one request handed to the writer, written together; {@code written} tells, once committed,
     * whether a successor of one of them waits, and {@code whenCommitted} is told so first.
     */
    private record Handover(List<FinishedAttempt> attempts, Consumer<Boolean> whenCommitted,
                            CompletableFuture<Boolean> written) {

        boolean successorWaits(Set<UUID> successorsWaiting) {
            return attempts.stream().anyMatch(a -> successorsWaiting.contains(a.delivery().id()));
        }

        void tell(Set<UUID> successorsWaiting) {
            try {
                whenCommitted.accept(successorWaits(successorsWaiting));
            } catch (RuntimeException e) {
                log.error("After attempt {} was recorded", attempts.get(0).delivery().id(), e);
            }
        }

        void answer(Set<UUID> successorsWaiting) {
            written.complete(successorWaits(successorsWaiting));
        }

        void committed(Set<UUID> successorsWaiting) {
            tell(successorsWaiting);
            answer(successorsWaiting);
        }
    }

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(AttemptRecorder.class);

    private final NotificationStore store;
    private final BlockingQueue<Handover> queue = new LinkedBlockingQueue<>();
    private final Thread writer;
    private final DistributionSummary groups;
    private volatile boolean open = true;

    public AttemptRecorder(NotificationStore store, MeterRegistry meters) {
        this.store = store;
        this.groups = DistributionSummary.builder("lockwatch.notifications.attempts.recorded.together")
                .description("attempts written in one transaction").register(meters);
        this.writer = new Thread(this::writeWhileOpen, "lockwatch-attempt-recorder");
        writer.setDaemon(true);
        writer.start();
    }

    /**
     * Returns once the attempt is committed; throws what kept it from being written.
     *
     * @return whether it finished its queue's head while a newer notification of the same client and sensor waits
     */
    public boolean record(FinishedAttempt attempt) {
        return record(List.of(attempt), successorWaits -> { });
    }

    /**
     * Returns once the attempts of one request (one notification, or a batch) are committed together, after
     * {@code whenCommitted} was told, with every other attempt of its group (on the writer's thread; it must be quick
     * and must not fail); throws what kept them from being written, and then {@code whenCommitted} is not told.
     *
     * @return whether one finished its queue's head while a newer notification of the same client and sensor waits
     */
    public boolean record(List<FinishedAttempt> attempts, Consumer<Boolean> whenCommitted) {
        if (!open) {
            throw new IllegalStateException("attempt recorder closed: attempt not recorded");
        }
        Handover handover = new Handover(List.copyOf(attempts), whenCommitted, new CompletableFuture<>());
        queue.add(handover);
        // closed meanwhile: the writer may have had its last look at the queue already. Whichever of the two takes
        // the attempt out of the queue answers for it.
        if (!open && queue.remove(handover)) {
            throw new IllegalStateException("attempt recorder closed: attempt not recorded");
        }
        try {
            return handover.written().get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException failure) {
                throw failure;
            }
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the attempt was recorded", e);
        }
    }

    /** Attempts handed over and not yet taken into a group (tests). */
    int waiting() {
        return queue.size();
    }

    private void writeWhileOpen() {
        List<Handover> group = new ArrayList<>();
        while (open || !queue.isEmpty()) {
            try {
                Handover first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                group.add(first);
                queue.drainTo(group);
                write(group);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException | Error e) {
                // never leave a poster waiting, whatever went wrong
                group.forEach(h -> h.written().completeExceptionally(e));
            } finally {
                group.clear();
            }
        }
    }

    private void write(List<Handover> group) {
        groups.record(group.size());
        try {
            Set<UUID> successorsWaiting = store.recordAttempts(
                    group.stream().flatMap(h -> h.attempts().stream()).toList());
            group.forEach(h -> h.tell(successorsWaiting));
            group.forEach(h -> h.answer(successorsWaiting));
        } catch (RuntimeException e) {
            if (group.size() == 1) {
                group.get(0).written().completeExceptionally(e);
                return;
            }
            for (Handover h : group) {
                try {
                    h.committed(store.recordAttempts(h.attempts()));
                } catch (RuntimeException one) {
                    h.written().completeExceptionally(one);
                }
            }
        }
    }

    /** Writes what was handed over already, then stops. */
    @Override
    public void close() throws InterruptedException {
        open = false;
        writer.join(TimeUnit.SECONDS.toMillis(10));
    }
}
