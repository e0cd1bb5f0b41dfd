package io.lockwatch.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Were the notifications right? Every state change of the timed run must reach each client linked to its sensor
 * exactly once after de-duplication by the event's id (a one-event request's {@code webhook-id}), signed with the
 * client's secret, with the state the reference computed; nothing may arrive for a repeat; and the changes of one
 * sensor must arrive at one client in sequence order, ending with the newest. A healthy endpoint hears every event:
 * only a client whose endpoint misbehaved in the run (the client drills' client 0) may have changes superseded, and
 * those count as accounted for provided the database marks exactly that many notifications superseded and none is
 * left pending, dead or cancelled. No event id may arrive twice, except where a drill takes the service or its
 * database away between a POST and its record (at least once, by design).
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
    record Verdict(long expected, long delivered, long superseded, Map<String, Long> supersededByReason,
                   long problems, List<String> firstProblems, Map<String, Long> statuses, long redeliveries,
                   long[] latenciesMs) {
        boolean ok() {
            return problems == 0;
        }
    }

    private NotificationCheck() {
    }

    /**
     * @param supersededByClient superseded notifications by client id, from the database
     * @param mayCollapse        the clients (by index) whose endpoint misbehaved: theirs may be superseded
     * @param redeliveriesAllowed whether an event id may arrive twice (a drill broke the service or its database)
     */
    static Verdict check(Reference reference, Links links, List<Webhooks.Arrival> arrivals, long redeliveries,
                         long malformed, Map<String, Long> statuses, Map<String, Long> supersededByReason,
                         Map<String, Long> supersededByClient, Set<Integer> mayCollapse, boolean redeliveriesAllowed) {
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
            String what = a.eventId() + " (client " + a.client() + ", sensor " + a.sensorId() + ", sequence "
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
                problem.accept(what + ": the same change notified again under another event id");
            } else {
                latencies[n++] = a.latencyMs();
            }
        }
        checkOrder(reference, links, arrivals, problem);
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
            problem.accept(String.format("the database marks %,d delivered, the receivers got %,d distinct event ids",
                    statuses.getOrDefault("delivered", 0L), arrivals.size()));
        }
        for (int c = 0; c < links.clients(); c++) {
            long ofClient = supersededByClient.getOrDefault(Links.clientId(c), 0L);
            if (ofClient > 0 && !mayCollapse.contains(c)) {
                problem.accept(String.format("%,d notifications of client %d superseded, though its endpoint was healthy (by reason, all clients: %s)",
                        ofClient, c, supersededByReason));
            }
        }
        if (redeliveries > 0 && !redeliveriesAllowed) {
            problem.accept(redeliveries + " event ids arrived more than once");
        }
        if (malformed > 0) {
            problem.accept(malformed + " requests without webhook headers or with an unreadable body");
        }
        long[] sorted = Arrays.copyOf(latencies, n);
        Arrays.sort(sorted);
        return new Verdict(expected, delivered, superseded, supersededByReason, problems[0], shown, statuses,
                redeliveries, sorted);
    }

    /**
     * Per client and sensor, the changes arrive in sequence order (by the order the receiver took the requests
     * in), and the last is the sensor's newest change: what a client that came back from an outage must end with.
     */
    private static void checkOrder(Reference reference, Links links, List<Webhooks.Arrival> arrivals,
                                   java.util.function.Consumer<String> problem) {
        Map<String, Webhooks.Arrival> last = new java.util.HashMap<>();
        List<Webhooks.Arrival> inOrder = new ArrayList<>(arrivals);
        inOrder.sort(java.util.Comparator.comparingLong(Webhooks.Arrival::order));
        for (Webhooks.Arrival a : inOrder) {
            Webhooks.Arrival before = last.put(a.client() + "/" + a.sensorId(), a);
            if (before != null && before.sequence() >= a.sequence()) {
                problem.accept(String.format("client %d, sensor %s: sequence %d arrived after %d", a.client(),
                        a.sensorId(), a.sequence(), before.sequence()));
            }
        }
        for (int s = 0; s < reference.sensors(); s++) {
            long newest = reference.changes(s);
            if (newest < 2) {
                continue; // no change in the run
            }
            for (int c : links.clientsOf(s)) {
                Webhooks.Arrival a = last.get(c + "/" + reference.id(s));
                if (a == null || a.sequence() != newest) {
                    problem.accept(String.format("client %d, sensor %s: the last change received is %s, the newest is %d",
                            c, reference.id(s), a == null ? "none" : Long.toString(a.sequence()), newest));
                }
            }
        }
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
