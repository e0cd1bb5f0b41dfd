package io.lockwatch.notify;

import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.camel.ProducerTemplate;

/**
 * Starts a claim of due notifications now instead of at the next poll. {@link #lanesHaveWork}: ingest recorded new
 * notifications for these clients, so the claim asks their lanes; {@link #wakeUp()}: new notifications were
 * recorded (by the heartbeat, the alarms, the API's replays and redeliveries) or the poll came, so the claim
 * looks for due work of every client; {@link #laneHasRoom()}: an attempt finished and its lane (or the instance) has
 * room for more of what it knows is due (routes/notify.camel.yaml). One wake-up waiting is enough, so a full queue
 * drops the new one; whether the next claim looks everywhere is kept here, so a dropped wake-up loses nothing.
 * <p>
 * Each wake-up is a new, empty exchange. Sending the caller's own exchange instead (a plain seda send) would hand its
 * completion tasks to a copy that the full queue discards: a poster's request slot, or a batch the aggregator counts
 * in flight, would never be released. And a copy would carry the caller's properties (an attempt's caught exception)
 * into the attempts the claim starts.
 */
public class ClaimWakeUp {

    static final String QUEUE = "seda:notifications-recorded?size=1&discardWhenFull=true&waitForTaskToComplete=Never";

    private final ProducerTemplate producer;
    private final Lanes lanes;
    /** The next claim looks for due work of every client; at first, for what waited while the service was down. */
    private final AtomicBoolean lookEverywhere = new AtomicBoolean(true);
    private final java.util.concurrent.atomic.AtomicLong committedSince = new java.util.concurrent.atomic.AtomicLong();

    public ClaimWakeUp(ProducerTemplate producer, Lanes lanes) {
        this.producer = producer;
        this.lanes = lanes;
    }

    /**
     * New notifications are pending for these clients: their lanes have work, and the claim asks only them. So the
     * claim that follows each batch of readings costs what those few clients cost, not a look at every client with
     * pending notifications (a thousand small clients each with a retry waiting).
     */
    public void lanesHaveWork(Set<UUID> clients) {
        // the lanes first: a claim that takes the commit's time must also see its lanes
        clients.forEach(lanes::workWaits);
        committedSince.compareAndSet(0, System.nanoTime());
        producer.sendBody(QUEUE, null);
    }

    /**
     * When the oldest commit that announced notifications and no claim has taken up yet was announced (nanoTime), or 0;
     * asking clears it. The claim that takes it measures the stage from commit to claim.
     */
    long takeCommittedSince() {
        return committedSince.getAndSet(0);
    }

    /** A claim that took a commit's time but did not look (no room) leaves it to the claim that will. */
    void putBackCommittedSince(long since) {
        if (since != 0) {
            committedSince.accumulateAndGet(since, (now, given) -> now == 0 || given - now < 0 ? given : now);
        }
    }

    /** New notifications may be due for any client: the next claim looks everywhere. */
    public void wakeUp() {
        lookEverywhere.set(true);
        producer.sendBody(QUEUE, null);
    }

    /** A lane has room for what it knows is due. */
    public void laneHasRoom() {
        producer.sendBody(QUEUE, null);
    }

    /** Whether this claim is to look everywhere; asking clears it. */
    boolean takeLookEverywhere() {
        return lookEverywhere.getAndSet(false);
    }

    /** The claim that was to look everywhere could not claim: the next one does. */
    void lookEverywhereNextTime() {
        lookEverywhere.set(true);
    }
}
