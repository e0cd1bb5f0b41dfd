package io.lockwatch.notify;

import java.time.Duration;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Webhook delivery.
 *
 * @param timeout                 an attempt succeeds only with a 2xx answer within this time
 * @param connectTimeout          of which establishing the connection may take at most this
 * @param retrySchedule           delay before the 2nd, 3rd, … attempt; after the last one the notification is dead
 * @param maxRetryAfter           a {@code Retry-After} answer (429/503) may push the next attempt this far at most
 * @param pollInterval            how often due notifications are looked for (they are also handed over at once
 *                                by the instance that recorded them)
 * @param maxConcurrent           requests in flight per instance, all clients together
 * @param lane                    the bounds of each client's lane: its requests in flight per instance
 * @param circuitFailures         consecutive failures of a client that open its circuit
 * @param circuitOpenFor          how long an open circuit stops attempts to that client before one is let through
 * @param allowPrivateTargets     allow client URLs on loopback, link-local and private addresses (SSRF guard off)
 * @param alertUrl                optional operator URL that is POSTed each notification that goes dead and each
 *                                client that is paused
 * @param pauseAfterFailing       a client whose endpoint has failed without a single success for this long is paused
 * @param secretGrace             after a rotation, the old secret signs too for this long
 * @param replayMaxAge            how far back a replay may reach ({@code since}): its backlog goes to the client
 *                                before its live events
 */
@ConfigurationProperties("lockwatch.notify")
public record NotifyProperties(Duration timeout, Duration connectTimeout, List<Duration> retrySchedule,
                               Duration maxRetryAfter, Duration pollInterval, int maxConcurrent,
                               Lane lane, int circuitFailures, Duration circuitOpenFor,
                               boolean allowPrivateTargets, String alertUrl, Duration pauseAfterFailing,
                               Duration secretGrace, Duration replayMaxAge) {

    /**
     * A client's lane: how many of its requests may be in flight in one instance. The bound adapts to how its endpoint
     * answers (LaneLimit).
     *
     * @param minConcurrency     the least a lane's bound shrinks to, on timeouts, 429, 5xx and rising latency
     * @param initialConcurrency a lane's bound when it is first met
     * @param maxConcurrency     the most a lane's bound grows to while its endpoint answers fast and 2xx; with several
     *                           instances, shared among the live ones
     */
    public record Lane(int minConcurrency, int initialConcurrency, int maxConcurrency) {
    }

    /** The lease of a claimed notification: long enough for one attempt, short enough to recover a crash. */
    public Duration lease() {
        return timeout.plus(connectTimeout).plusSeconds(10);
    }
}
