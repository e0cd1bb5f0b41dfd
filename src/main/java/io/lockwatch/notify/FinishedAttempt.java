package io.lockwatch.notify;

import java.time.Instant;

import io.lockwatch.notify.NotificationStore.Outcome;

/**
 * One attempt as it is to be recorded: what the client answered (or why there was no answer), and what follows.
 *
 * @param statusCode    the client's HTTP status, null without an answer
 * @param error         why the attempt failed, null if it succeeded
 * @param nextAttemptAt when to try again, for {@link Outcome#RETRY} only
 */
record FinishedAttempt(Delivery delivery, Integer statusCode, String error, long startedAt, long durationMs,
                              Outcome outcome, Instant nextAttemptAt) {
}
