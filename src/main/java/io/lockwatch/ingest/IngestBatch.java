package io.lockwatch.ingest;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

import com.rabbitmq.client.Channel;
import io.lockwatch.infra.amqp.DeliveryTags;

/**
 * The readings and rejections of one batch, in delivery order, and the deliveries to acknowledge once it is
 * committed.
 */
public final class IngestBatch {

    private final List<Reading> readings = new ArrayList<>();
    private final List<Rejection> rejections = new ArrayList<>();
    private final List<Reading> forwards = new ArrayList<>();
    private final List<Claim> claims = new ArrayList<>();
    private final DeliveryTags deliveries = new DeliveryTags();
    /** The parking of the rejections known before apply, under way while the batch is applied; or null. */
    private java.util.concurrent.Future<?> earlyParking;
    private int parkedEarly;
    private ApplyOutcome outcome;
    private final long startedNanos = System.nanoTime();
    /** Whether a reading applied with this batch may change its sensor's state (a hint: see {@link #closes}). */
    private boolean mayChangeState;

    /** When its first message joined (System.nanoTime). */
    long startedNanos() {
        return startedNanos;
    }

    /**
     * Whether the batch closes now (asked as each message joins, when the batch thread becomes free, and every few
     * milliseconds, by {@link IngestBatches}): at full size; if the batch thread is free to apply it, at once when it
     * holds a reading that may change its sensor's state, else once it is {@code intervalNanos} old; and at the latest
     * once it is {@code maxWaitNanos} old.
     */
    boolean isComplete(int size, long intervalNanos, long maxWaitNanos, BooleanSupplier batchThreadFree) {
        return closes(size(), System.nanoTime() - startedNanos, size, intervalNanos, maxWaitNanos, mayChangeState,
                batchThreadFree);
    }

    /**
     * Smart batching for what clients wait for: a batch that may carry a change closes when the thread that applies
     * it is free, so a door's change is applied at once and, while a batch commits, the next one gathers whatever
     * arrives meanwhile, growing with the load. Repeats, which nobody hears of, wait up to the interval for company,
     * so that they do not cost a transaction (and a claim) each. Closing while the thread is busy would gain nothing
     * (the batch would wait in its queue) but smaller transactions, so only the size and the max wait close one then.
     */
    static boolean closes(int n, long ageNanos, int size, long intervalNanos, long maxWaitNanos, boolean mayChangeState,
                          BooleanSupplier batchThreadFree) {
        return n >= size || ageNanos >= maxWaitNanos
                || (mayChangeState || ageNanos >= intervalNanos) && batchThreadFree.getAsBoolean();
    }

    /**
     * One message: a reading, a rejection, or the list of them an array message holds; with partitions, the
     * readings of an array are {@linkplain #forwards forwarded} instead.
     */
    void add(Object parsed, Channel channel, Long deliveryTag, boolean forwardArrays) {
        add(parsed, channel, deliveryTag, forwardArrays, r -> false);
    }

    /** @param mayChangeState whether a reading may change its sensor's state, as far as is known before applying it */
    void add(Object parsed, Channel channel, Long deliveryTag, boolean forwardArrays,
             java.util.function.Predicate<Reading> mayChangeState) {
        int before = readings.size();
        addParsed(parsed, forwardArrays);
        for (int i = before; i < readings.size() && !this.mayChangeState; i++) {
            this.mayChangeState = mayChangeState.test(readings.get(i));
        }
        deliveries.add(channel, deliveryTag);
    }

    private void addParsed(Object parsed, boolean forwardArrays) {
        if (parsed instanceof FromGateway g) {
            for (Object one : g.parsed() instanceof java.util.List<?> several ? several : List.of(g.parsed())) {
                if (one instanceof Reading r) {
                    claims.add(new Claim(r, g.gatewayId(), g.refusal()));
                }
            }
            parsed = g.parsed();
        }
        if (parsed instanceof java.util.List<?> several) {
            for (Object one : several) {
                if (forwardArrays && one instanceof Reading r) {
                    forwards.add(r);
                } else {
                    addOne(one);
                }
            }
        } else {
            addOne(parsed);
        }
    }

    private void addOne(Object parsed) {
        if (parsed instanceof Reading r) {
            readings.add(r);
        } else if (parsed instanceof Rejection r) {
            rejections.add(r);
        } else {
            throw new IllegalArgumentException("not a reading: " + parsed);
        }
    }

    /**
     * A message a gateway published (its AMQP user-id): what it holds, and what each of its readings becomes if the
     * gateway does not report for its sensor.
     */
    record FromGateway(String gatewayId, Object parsed, java.util.function.Function<Reading, Rejection> refusal) {
    }

    /** A reading a gateway published, to be checked against the gateway's sensors before the batch is applied. */
    record Claim(Reading reading, String gatewayId, java.util.function.Function<Reading, Rejection> refusal) {
    }

    List<Claim> claims() {
        return claims;
    }

    /**
     * The claimed reading is not applied, nor forwarded: it is parked with the batch's rejections. Once only, so that
     * the step can run again for a batch retried while the database was away.
     */
    void refuse(Claim claim) {
        if (removeSame(readings, claim.reading()) || removeSame(forwards, claim.reading())) {
            rejections.add(claim.refusal().apply(claim.reading()));
        }
    }

    private static boolean removeSame(List<Reading> list, Reading reading) {
        for (int i = 0; i < list.size(); i++) {
            if (list.get(i) == reading) {
                list.remove(i);
                return true;
            }
        }
        return false;
    }

    /** When its first message joined, in epoch milliseconds (for its span). */
    long startedAtMillis() {
        return System.currentTimeMillis() - (System.nanoTime() - startedNanos) / 1_000_000;
    }

    public List<Reading> readings() {
        return readings;
    }

    public List<Rejection> rejections() {
        return rejections;
    }

    /**
     * Readings to publish again one by one, routed by their sensor, before the batch is acknowledged: an array
     * message holds readings of any partition, and each partition's consumer must be the only one to apply its
     * sensors' readings.
     */
    public List<Reading> forwards() {
        return forwards;
    }

    void parkingEarly(java.util.concurrent.Future<?> parking, int rejections) {
        this.earlyParking = parking;
        this.parkedEarly = rejections;
    }

    /** The early parking under way (taken: a retried park step publishes everything itself), or null. */
    java.util.concurrent.Future<?> takeEarlyParking() {
        java.util.concurrent.Future<?> f = earlyParking;
        earlyParking = null;
        return f;
    }

    int parkedEarly() {
        return parkedEarly;
    }

    public DeliveryTags deliveries() {
        return deliveries;
    }

    /** What applying the batch did; null until it is applied. */
    public ApplyOutcome outcome() {
        return outcome;
    }

    void recordOutcome(ApplyOutcome outcome) {
        this.outcome = outcome;
    }

    public int size() {
        return readings.size() + rejections.size() + forwards.size();
    }
}
