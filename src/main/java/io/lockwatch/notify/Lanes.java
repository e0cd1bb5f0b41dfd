package io.lockwatch.notify;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The delivery lanes of this instance, one per client: how many of the client's requests are in flight, how many may
 * be ({@link LaneLimit}, adapting to how its endpoint answers), whether it is known to have due notifications
 * waiting, and its circuit breaker.
 * <p>
 * A lane with room and work is claimed for as its requests finish, so it keeps its limit in flight; a lane whose
 * claim came back short has no due work left and is asked again only when new notifications are recorded, a
 * successor of one of its queues becomes due, or the poll looks for due work everywhere.
 * <p>
 * The circuit: after {@code failures} consecutive failed attempts it opens and the client's due notifications are
 * left alone for {@code openForMillis}; then one attempt is let through (half open), and its success closes it. So a
 * dead endpoint is not hammered and costs the others nothing, and recovers by itself.
 */
public class Lanes {

    /**
     * A client's lane as this instance sees it now: its circuit (closed, open, half_open), its bound on requests in
     * flight, and those in flight.
     */
    public record View(String circuit, int concurrencyLimit, int inFlight) {
    }

    private final int least;
    private final int initial;
    private final int most;
    private final Duration timeout;
    private final int failures;
    private final long openForMillis;
    private final LongSupplier clock;
    private final ConcurrentHashMap<UUID, Lane> lanes = new ConcurrentHashMap<>();
    /** The most one lane may have in flight in this instance: {@code most} shared among the live instances. */
    private volatile int share;

    /**
     * @param least   the least bound a lane's limit falls to
     * @param initial a new lane's limit
     * @param most    the most a lane's limit grows to
     * @param timeout an attempt's deadline: an answer slower than this is an overload
     */
    Lanes(int least, int initial, int most, Duration timeout, int failures, long openForMillis, LongSupplier clock) {
        this.least = least;
        this.initial = initial;
        this.most = most;
        this.timeout = timeout;
        this.failures = failures;
        this.openForMillis = openForMillis;
        this.clock = clock;
        this.share = most;
    }

    /**
     * Several instances each run a lane per client: each may have the most divided by how many are live (at least the
     * least), so that an endpoint's requests in flight from all of them stay within its bound.
     */
    void shareAmong(int instances) {
        share = Math.max(least, most / Math.max(1, instances));
    }

    private Lane lane(UUID client) {
        return lanes.computeIfAbsent(client, c -> new Lane(new LaneLimit(least, initial, most, timeout)));
    }

    /**
     * What a claim may give a lane: {@code room} more requests; {@code inFlight}, those it has, so that where the
     * instance's slots are fewer than the lanes' room the lanes with fewer in flight go first.
     */
    record Room(int room, int inFlight) {
    }

    /**
     * The room of each lane, for a claim: of the lanes known to have work and room; or, when the claim looks for
     * due work everywhere, of every lane this instance knows that differs from a lane not met before (full, in use,
     * its circuit open, its bound moved): the claim gives every other client with due work a new lane's room, so
     * the thousand idle lanes of small clients are not sent with each claim.
     */
    Map<UUID, Room> room(boolean everyLane) {
        long now = clock.getAsLong();
        int fresh = roomOfANewLane();
        Map<UUID, Room> room = new HashMap<>();
        lanes.forEach((client, lane) -> {
            synchronized (lane) {
                int r = lane.room(now);
                lane.workSeenByClaim = lane.workWaited;
                boolean likeANewOne = r == fresh && lane.inFlight == 0;
                if (everyLane ? !likeANewOne || lane.hasWork : lane.hasWork && r > 0) {
                    room.put(client, new Room(r, lane.inFlight));
                }
            }
        });
        return room;
    }

    /** The room of a lane not met before. */
    int roomOfANewLane() {
        return Math.min(initial, share);
    }

    /**
     * What a claim took for each lane: {@code requests} are now in flight; a lane not in {@code givenAll} (given all
     * it asked for: for each of its room a request of as many notifications as it may carry) has no due work left,
     * unless the claim was cut short by the instance's own room ({@code cutShort}).
     *
     * @param asked the room each lane asked with (a lane not met before: {@link #roomOfANewLane()})
     */
    void claimed(Map<UUID, Room> asked, Map<UUID, Integer> requests, Set<UUID> givenAll, boolean cutShort) {
        Set<UUID> took = new HashSet<>(requests.keySet());
        took.addAll(givenAll);
        took.forEach(client -> {
            Lane lane = lane(client);
            synchronized (lane) {
                lane.inFlight += requests.getOrDefault(client, 0);
                lane.hasWork = cutShort || givenAll.contains(client) || lane.workWaitedSinceTheClaim();
            }
        });
        if (!cutShort) {
            asked.forEach((client, room) -> {
                // a lane that asked with no room (full, or its circuit open) learnt nothing
                if (room.room() > 0 && !took.contains(client)) {
                    Lane lane = lanes.get(client);
                    if (lane != null) {
                        synchronized (lane) {
                            lane.hasWork = lane.workWaitedSinceTheClaim();
                        }
                    }
                }
            });
        }
    }

    /** A newer notification of one of the client's queues became due: its lane has work again. */
    void workWaits(UUID client) {
        Lane lane = lane(client);
        synchronized (lane) {
            lane.hasWork = true;
            lane.workWaited++;
        }
    }

    /** Whether the lane has due work and room for it now: then a claim should follow at once. */
    boolean hasWorkAndRoom(UUID client) {
        Lane lane = lanes.get(client);
        if (lane == null) {
            return false;
        }
        synchronized (lane) {
            return lane.hasWork && lane.room(clock.getAsLong()) > 0;
        }
    }

    /**
     * Takes a slot of the client's lane for a request outside the claims (a test ping), waiting up to {@code wait}
     * for one to be free. The circuit does not stop it: a ping is how an operator checks an endpoint whose circuit
     * is open. Given back with {@link #giveBack}.
     *
     * @return whether it has the slot
     */
    boolean enterOutsideTheClaims(UUID client, Duration wait) throws InterruptedException {
        Lane lane = lane(client);
        long deadline = System.nanoTime() + wait.toNanos();
        synchronized (lane) {
            while (lane.bound() - lane.inFlight <= 0) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(lane, left);
            }
            lane.inFlight++;
            return true;
        }
    }

    /** Frees a slot taken for an attempt that was never made or recorded: the circuit and the limit count nothing. */
    void giveBack(UUID client) {
        Lane lane = lanes.get(client);
        if (lane != null) {
            synchronized (lane) {
                lane.inFlight--;
                lane.notifyAll();
            }
        }
    }

    /**
     * An attempt finished: its slot is free, the circuit counts it ({@code success}: the endpoint is not failing, a
     * refused target included) and the limit learns from its answer.
     *
     * @param rttNanos how long the request took
     */
    void leave(UUID client, boolean success, LaneLimit.Signal signal, long rttNanos) {
        Lane lane = lanes.get(client);
        if (lane == null) {
            return;
        }
        synchronized (lane) {
            lane.limit.onAnswer(rttNanos, lane.inFlight, signal);
            lane.inFlight--;
            lane.notifyAll();
            if (success) {
                lane.consecutiveFailures = 0;
                lane.openUntil = 0;
            } else if (++lane.consecutiveFailures >= failures) {
                lane.openUntil = clock.getAsLong() + openForMillis;
            }
        }
    }

    /** The client's lane in this instance. */
    public View view(UUID client) {
        Lane lane = lanes.get(client);
        if (lane == null) {
            return new View("closed", roomOfANewLane(), 0);
        }
        synchronized (lane) {
            return new View(lane.circuit(clock.getAsLong()), lane.bound(), lane.inFlight);
        }
    }

    /** Clients whose circuit is open or half open in this instance: failing, their notifications held back. */
    int notClosed() {
        long now = clock.getAsLong();
        int n = 0;
        for (Lane lane : lanes.values()) {
            synchronized (lane) {
                if (!lane.circuit(now).equals("closed")) {
                    n++;
                }
            }
        }
        return n;
    }

    /** One client's lane; guarded by itself. */
    private final class Lane {
        final LaneLimit limit;
        int inFlight;
        boolean hasWork;
        /**
         * Counts the times work was said to wait ({@link #workWaits}), and what it was when the claim running now
         * asked for the lane's room: work said to wait while a claim runs may have come after its statement looked,
         * so that claim's coming back short does not mean none is left.
         */
        long workWaited;
        long workSeenByClaim;
        int consecutiveFailures;
        long openUntil;

        Lane(LaneLimit limit) {
            this.limit = limit;
        }

        boolean workWaitedSinceTheClaim() {
            return workWaited != workSeenByClaim;
        }

        /** Requests it may start now: none while its circuit is open, one probe at a time half open. */
        int room(long now) {
            if (consecutiveFailures >= failures) {
                return now >= openUntil && inFlight == 0 ? 1 : 0;
            }
            return Math.max(0, bound() - inFlight);
        }

        /** Its adaptive limit, within this instance's share. */
        int bound() {
            return Math.min(limit.get(), share);
        }

        String circuit(long now) {
            if (consecutiveFailures < failures) {
                return "closed";
            }
            return now >= openUntil ? "half_open" : "open";
        }
    }
}
