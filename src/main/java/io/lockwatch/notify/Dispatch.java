package io.lockwatch.notify;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;

/**
 * One POST to a client, as claimed: one notification; or, for a client that asked for batches
 * ({@code max_events_per_request} above 1), up to that many of its notifications, at most one of each sensor (each the
 * head of its queue), in the order they came due. A request holds one slot of the instance and of the client's lane,
 * however many notifications it carries, and its answer counts for all of them. {@code claimedAtNanos}: when the claim
 * that made it ended, for the latency of the stage from claim to POST.
 */
record Dispatch(List<Delivery> deliveries, long claimedAtNanos) {

    Dispatch {
        if (deliveries.isEmpty()) {
            throw new IllegalArgumentException("a dispatch of no notification");
        }
        deliveries = List.copyOf(deliveries);
    }

    Dispatch(List<Delivery> deliveries) {
        this(deliveries, System.nanoTime());
    }

    Delivery first() {
        return deliveries.get(0);
    }

    UUID clientId() {
        return first().clientId();
    }

    /** Its body is a JSON array of events: the client asked for batches, even where this one holds one event. */
    boolean batched() {
        return first().maxEventsPerRequest() > 1;
    }

    /**
     * The request's {@code webhook-id}: a notification's own id; a batch's, a name-based UUID of the ids it carries,
     * so a retry of the same events has the same id and a receiver may de-duplicate either way.
     */
    String webhookId() {
        if (!batched()) {
            return first().id().toString();
        }
        StringBuilder ids = new StringBuilder("lockwatch-batch");
        deliveries.forEach(d -> ids.append(':').append(d.id()));
        return UUID.nameUUIDFromBytes(ids.toString().getBytes(StandardCharsets.UTF_8)).toString();
    }
}
