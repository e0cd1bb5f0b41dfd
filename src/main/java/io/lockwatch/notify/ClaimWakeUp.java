package io.lockwatch.notify;

import org.apache.camel.ProducerTemplate;

/**
 * Starts a claim of due notifications now instead of at the next poll: called by ingest and the heartbeat when they
 * have recorded notifications, by the API when it redelivers dead ones, and by the posters while a backlog drains
 * (routes/notify.camel.yaml). One wake-up waiting is enough, so a full queue drops the new one.
 * <p>
 * Each wake-up is a new, empty exchange. Sending the caller's own exchange instead (a plain seda send) would hand its
 * completion tasks to a copy that the full queue discards: a poster's request slot, or a batch the aggregator counts
 * in flight, would never be released. And a copy would carry the caller's properties (an attempt's caught exception)
 * into the attempts the claim starts.
 */
public class ClaimWakeUp {

    static final String QUEUE = "seda:notifications-recorded?size=1&discardWhenFull=true&waitForTaskToComplete=Never";

    private final ProducerTemplate producer;

    public ClaimWakeUp(ProducerTemplate producer) {
        this.producer = producer;
    }

    public void wakeUp() {
        producer.sendBody(QUEUE, null);
    }
}
