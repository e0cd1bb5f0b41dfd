package io.lockwatch.notify;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.function.DoubleSupplier;

/**
 * What follows an attempt, decided from its answer alone: delivered on a 2xx; else the next attempt after the
 * schedule's delay for it, give or take a fifth (so that the clients of a recovering endpoint do not all come
 * back at once), or later if the endpoint asked so with {@code Retry-After}; dead after the last.
 */
final class RetryPolicy {

    private static final double JITTER = 0.2;

    private final List<Duration> schedule;
    private final Duration maxRetryAfter;
    private final DoubleSupplier random;

    /** @param random a uniform number in [0, 1) per call */
    RetryPolicy(List<Duration> schedule, Duration maxRetryAfter, DoubleSupplier random) {
        this.schedule = List.copyOf(schedule);
        this.maxRetryAfter = maxRetryAfter;
        this.random = random;
    }

    sealed interface Decision permits Delivered, Retry, Dead {
    }

    record Delivered() implements Decision {
    }

    record Retry(Instant at) implements Decision {
    }

    record Dead() implements Decision {
    }

    /**
     * @param attempt    the number of the attempt just made, 1 for the first
     * @param failed     whether it failed (no answer, a non-2xx answer, a refused target)
     * @param status     the answer's HTTP status, null without one
     * @param retryAfter the answer's {@code Retry-After} header, if any
     */
    Decision after(int attempt, boolean failed, Integer status, String retryAfter, Instant now) {
        if (!failed) {
            return new Delivered();
        }
        if (attempt > schedule.size()) {
            return new Dead();
        }
        Duration base = schedule.get(attempt - 1);
        Duration delay = Duration.ofMillis(Math.round(base.toMillis() * (1 - JITTER + 2 * JITTER * random.getAsDouble())));
        Duration asked = (status != null && (status == 429 || status == 503)) ? retryAfter(retryAfter, now) : null;
        if (asked != null && asked.compareTo(delay) > 0) {
            delay = asked.compareTo(maxRetryAfter) > 0 ? maxRetryAfter : asked;
        }
        return new Retry(now.plus(delay));
    }

    int maxAttempts() {
        return schedule.size() + 1;
    }

    /** Seconds, or an HTTP date; null if it is neither. */
    static Duration retryAfter(String header, Instant now) {
        if (header == null || header.isBlank()) {
            return null;
        }
        try {
            return Duration.ofSeconds(Math.max(0, Long.parseLong(header.trim())));
        } catch (NumberFormatException e) {
            try {
                Instant at = ZonedDateTime.parse(header.trim(), DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
                return at.isBefore(now) ? Duration.ZERO : Duration.between(now, at);
            } catch (RuntimeException ignored) {
                return null;
            }
        }
    }
}
