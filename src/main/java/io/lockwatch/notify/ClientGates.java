package io.lockwatch.notify;

import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * Per client, in this instance: how many requests are in flight (at most {@code perClientConcurrency}) and a
 * circuit breaker. After {@code failures} consecutive failed attempts the circuit opens and the client's due
 * notifications are left alone for {@code openForMillis}; then one attempt is let through (half open), and its
 * success closes the circuit. So a dead endpoint is not hammered and costs the others nothing, and recovers by
 * itself.
 */
public class ClientGates {

    private final int perClientConcurrency;
    private final int failures;
    private final long openForMillis;
    private final LongSupplier clock;
    private final ConcurrentHashMap<UUID, Gate> gates = new ConcurrentHashMap<>();

    public ClientGates(int perClientConcurrency, int failures, long openForMillis, LongSupplier clock) {
        this.perClientConcurrency = perClientConcurrency;
        this.failures = failures;
        this.openForMillis = openForMillis;
        this.clock = clock;
    }

    /** Clients that must not be claimed for now: full, or with an open circuit. */
    public Set<UUID> closedClients() {
        long now = clock.getAsLong();
        return gates.entrySet().stream().filter(e -> !e.getValue().admits(now)).map(java.util.Map.Entry::getKey)
                .collect(Collectors.toSet());
    }

    /** Takes a slot for one request, or says no (the notification is then put back, not attempted). */
    public boolean tryEnter(UUID client) {
        return gates.computeIfAbsent(client, c -> new Gate()).tryEnter(clock.getAsLong());
    }

    /** The client's circuit in this instance: closed, open (its notifications wait) or half_open (one probe). */
    public String circuit(UUID client) {
        Gate gate = gates.get(client);
        return gate == null ? "closed" : gate.circuit(clock.getAsLong());
    }

    /** Clients whose circuit is open or half open in this instance: failing, their notifications held back. */
    public int notClosed() {
        long now = clock.getAsLong();
        int n = 0;
        for (Gate gate : gates.values()) {
            if (!gate.circuit(now).equals("closed")) {
                n++;
            }
        }
        return n;
    }

    /** Frees a slot taken for an attempt that was never made or recorded: the circuit counts nothing. */
    public void giveBack(UUID client) {
        Gate gate = gates.get(client);
        if (gate != null) {
            gate.giveBack();
        }
    }

    public void leave(UUID client, boolean success) {
        Gate gate = gates.get(client);
        if (gate != null) {
            gate.leave(success, clock.getAsLong());
        }
    }

    private final class Gate {
        int inFlight;
        int consecutiveFailures;
        long openUntil;

        synchronized boolean admits(long now) {
            if (consecutiveFailures >= failures) {
                return now >= openUntil && inFlight == 0; // half open: one probe at a time
            }
            return inFlight < perClientConcurrency;
        }

        synchronized String circuit(long now) {
            if (consecutiveFailures < failures) {
                return "closed";
            }
            return now >= openUntil ? "half_open" : "open";
        }

        synchronized boolean tryEnter(long now) {
            if (!admits(now)) {
                return false;
            }
            inFlight++;
            return true;
        }

        synchronized void giveBack() {
            inFlight--;
        }

        synchronized void leave(boolean success, long now) {
            inFlight--;
            if (success) {
                consecutiveFailures = 0;
                openUntil = 0;
            } else if (++consecutiveFailures >= failures) {
                openUntil = now + openForMillis;
            }
        }
    }
}
