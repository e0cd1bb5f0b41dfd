package io.lockwatch.notify;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.micrometer.tracing.Span;

/**
 * One attempt at one request (a notification, or a client's batch of them: {@link Dispatch}), the body of the
 * posting route ({@code routes/notify.camel.yaml}) stage by stage:
 * {@link Prepared} (the signed request, or why it may not be sent), {@link Posted} (the endpoint's answer),
 * {@link Recorded} (its lane, which may claim again at once). Each stage takes what the stage before it made and
 * nothing else, so an attempt carries nothing of the exchange its claim was split from.
 */
sealed interface Attempt permits Attempt.Prepared, Attempt.Posted {

    Prepared prepared();

    /** The endpoint's answer; null if the request was never sent. */
    WebhookPoster.Answer answer();

    /** What the poster sends: the client's URL, the signature's (and the trace's) headers, the JSON body. */
    record Request(String url, Map<String, String> headers, String body) {
    }

    /**
     * Ready to post, or refused before posting ({@code refusal}: the target guard's reason, or a secret that could
     * not be opened). {@code held} is what the attempt holds until it is recorded or its exchange ends.
     */
    record Prepared(Dispatch dispatch, long startedAt, Request request, String refusal, Held held) implements Attempt {

        /** Whether the poster may send it (the route's choice asks this). */
        public boolean isPostable() {
            return refusal == null;
        }

        @Override
        public Prepared prepared() {
            return this;
        }

        @Override
        public WebhookPoster.Answer answer() {
            return null;
        }
    }

    /** {@code tookNanos}: from sending the request to its answer (or to giving up on one). */
    record Posted(Prepared prepared, WebhookPoster.Answer answer, long tookNanos) implements Attempt {
    }

    /** What the route still needs once the attempt is recorded, to know whether to claim again at once: its client. */
    record Recorded(java.util.UUID client) {
    }

    /**
     * What an attempt holds: a request slot of this instance and its client's slot in its lane, each given back
     * once (on record, or when the exchange ends however it ends), and its span while it is open (tracing on).
     */
    final class Held {
        final AtomicBoolean slot = new AtomicBoolean(true);
        final AtomicBoolean laneSlot = new AtomicBoolean(true);
        final AtomicReference<Span> span = new AtomicReference<>();
    }
}
