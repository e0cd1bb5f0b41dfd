package io.lockwatch.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Were the notifications right? Every state change of the timed run must reach each client linked to its
 * sensor exactly once after de-duplication by {@code webhook-id}, signed with the client's secret, with the
 * state the reference computed; nothing may arrive for a repeat. A change the service superseded by a newer
 * one of the same sensor before it was delivered (its documented behaviour) counts as accounted for, provided
 * the database marks exactly that many notifications superseded and none is left pending, dead or cancelled.
 *
 * <p>All sensors were pre-seeded (event 1, before any link existed), so the timed run's changes of sensor
 * {@code s} are its events {@code 2 .. changes(s)}.
 */
final class NotificationCheck {

    private static final int MAX_SHOWN = 10;

    /**
     * @param expected        state changes times linked clients
     * @param delivered       distinct (client, sensor, sequence) received, each valid
     * @param latenciesMs     event (its {@code occurred_at}) to arrival, per notification received, sorted
     */
    record Verdict(long expected, long delivered, long superseded, long problems, List<String> firstProblems,
                   Map<String, Long> statuses, long redeliveries, long[] latenciesMs) {
        boolean ok() {
            return problems == 0;
        }
    }

    private NotificationCheck() {
    }

    static Verdict check(Reference reference, Links links, List<Webhooks.Arrival> arrivals, long redeliveries,
                         long malformed, Map<String, Long> statuses) {
        List<String> shown = new ArrayList<>();
        long[] problems = {0};
        java.util.function.Consumer<String> problem = p -> {
            problems[0]++;
            if (shown.size() < MAX_SHOWN) {
                shown.add(p);
            }
        };
        long expected = 0;
        for (int s = 0; s < reference.sensors(); s++) {
            expected += (long) Math.max(0, reference.changes(s) - 1) * links.clientsOf(s).length;
        }
        Set<String> keys = new HashSet<>();
        long[] latencies = new long[arrivals.size()];
        int n = 0;
        for (Webhooks.Arrival a : arrivals) {
            int s = reference.indexOf(a.sensorId());
            String what = a.webhookId() + " (client " + a.client() + ", sensor " + a.sensorId() + ", sequence "
                    + a.sequence() + ")";
            if (!a.signatureValid()) {
                problem.accept(what + ": the signature does not verify with the client's secret");
            } else if (!Links.clientId(a.client()).equals(a.clientId())) {
                problem.accept(what + ": client_id " + a.clientId() + " is another client's");
            } else if (s < 0 || !links.linked(a.client(), s)) {
                problem.accept(what + ": the sensor is not linked to this client");
            } else if (!"sensor.state_changed".equals(a.type())) {
                problem.accept(what + ": unexpected type " + a.type());
            } else if (a.sequence() < 2 || a.sequence() > reference.changes(s)) {
                problem.accept(what + ": no such change in the timed run (the sensor changed "
                        + (reference.changes(s) - 1) + " times)");
            } else if (a.state() == null || a.state() != reference.stateAt(s, a.sequence())) {
                problem.accept(what + ": state " + a.state() + ", expected " + reference.stateAt(s, a.sequence()));
            } else if (!keys.add(a.client() + "/" + s + "/" + a.sequence())) {
                problem.accept(what + ": the same change notified again under another webhook-id");
            } else {
                latencies[n++] = a.latencyMs();
            }
        }
        long delivered = keys.size();
        long superseded = statuses.getOrDefault("superseded", 0L);
        if (delivered + superseded != expected) {
            problem.accept(String.format("%,d changes x clients expected, %,d received and %,d superseded: %,d missing",
                    expected, delivered, superseded, expected - delivered - superseded));
        }
        for (String status : List.of("pending", "delivering", "dead", "cancelled")) {
            if (statuses.getOrDefault(status, 0L) > 0) {
                problem.accept(statuses.get(status) + " notifications are " + status);
            }
        }
        if (statuses.getOrDefault("delivered", 0L) != arrivals.size()) {
            problem.accept(String.format("the database marks %,d delivered, the receivers got %,d distinct webhook-ids",
                    statuses.getOrDefault("delivered", 0L), arrivals.size()));
        }
        if (malformed > 0) {
            problem.accept(malformed + " requests without webhook headers or with an unreadable body");
        }
        long[] sorted = Arrays.copyOf(latencies, n);
        Arrays.sort(sorted);
        return new Verdict(expected, delivered, superseded, problems[0], shown, statuses, redeliveries, sorted);
    }

    /** The q-quantile (0..1) of sorted values, nearest rank; NaN for none. */
    static double quantile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
    }
}
