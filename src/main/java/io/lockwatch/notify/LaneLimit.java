package io.lockwatch.notify;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import com.netflix.concurrency.limits.limit.AIMDLimit;
import com.netflix.concurrency.limits.limit.Gradient2Limit;

/**
 * How many requests one client's endpoint is sent at once: a bound that adapts to how it answers, between a
 * configured least and most, as TCP's congestion window does. Two of Netflix's concurrency-limits judge each answer,
 * and the lower of their limits holds:
 * <ul>
 *   <li>AIMD, for loss: one more while answers come back 2xx with the lane in use; cut by a quarter on an answer that
 *       says the endpoint is overloaded (429, 5xx) or on no answer in time;</li>
 *   <li>Gradient2, for latency: as the answers' time rises above its long-run average the limit shrinks in
 *       proportion, and grows again as it falls back.</li>
 * </ul>
 * An answer that says nothing of capacity (a 4xx other than 429, a refused target) is no sample. A pure function of
 * the answers it is given, in the order given: no clock, no thread of its own.
 */
final class LaneLimit {

    /** What an answer says of the endpoint's capacity. */
    enum Signal {
        /** a 2xx: taken; its time is a sample of the endpoint's latency */
        TAKEN,
        /** 429, 5xx, or no answer (a timeout, a refused or dropped connection): too much */
        OVERLOADED,
        /** anything else (a 4xx, a target the guard refused): says nothing of capacity */
        UNRELATED
    }

    /** The multiplicative cut on an overload: a quarter off, as a middle way between TCP's half and Netflix's 0.9. */
    static final double BACKOFF = 0.75;

    private final int least;
    private final int most;
    private final AIMDLimit loss;
    private final Gradient2Limit latency;

    /**
     * @param timeout an answer slower than this counts as an overload even if it came (the attempt's deadline)
     */
    LaneLimit(int least, int initial, int most, Duration timeout) {
        if (least < 1 || initial < least || most < initial) {
            throw new IllegalArgumentException("want 1 <= least <= initial <= most, got " + least + ", " + initial + ", " + most);
        }
        this.least = least;
        this.most = most;
        this.loss = AIMDLimit.newBuilder().minLimit(least).initialLimit(initial).maxLimit(most).backoffRatio(BACKOFF)
                .timeout(Math.max(1, timeout.toNanos()), TimeUnit.NANOSECONDS).build();
        this.latency = Gradient2Limit.newBuilder().minLimit(least).initialLimit(initial).maxConcurrency(most).build();
    }

    /** What an attempt's answer says: from its status, or its absence. */
    static Signal signal(Integer status, boolean refusedByTheGuard) {
        if (refusedByTheGuard) {
            return Signal.UNRELATED;
        }
        if (status == null) {
            return Signal.OVERLOADED;
        }
        if (status >= 200 && status < 300) {
            return Signal.TAKEN;
        }
        return status == 429 || status >= 500 ? Signal.OVERLOADED : Signal.UNRELATED;
    }

    /**
     * One answer.
     *
     * @param rttNanos how long the request took, from sending to the answer
     * @param inFlight the lane's requests in flight when it was sent, itself included (growth needs the lane in use)
     */
    synchronized void onAnswer(long rttNanos, int inFlight, Signal signal) {
        if (signal == Signal.UNRELATED) {
            return;
        }
        long rtt = Math.max(1, rttNanos);
        boolean overloaded = signal == Signal.OVERLOADED;
        loss.onSample(0, rtt, inFlight, overloaded);
        if (!overloaded) {
            // a failed answer's time is not the endpoint's latency at this load (a timeout is the deadline's)
            latency.onSample(0, rtt, inFlight, false);
        }
    }

    /** The bound now. */
    int get() {
        return Math.max(least, Math.min(most, Math.min(loss.getLimit(), latency.getLimit())));
    }
}
