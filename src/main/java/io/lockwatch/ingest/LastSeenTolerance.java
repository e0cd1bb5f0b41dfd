package io.lockwatch.ingest;

/**
 * How far a sensor's stored last-seen time may lag behind the readings applied: 1% of its heartbeat timeout, at most
 * 30 s. A repeat reading within it is not written; the stored lost deadline adds it, so a silence is declared never
 * early and at most this late.
 */
public final class LastSeenTolerance {

    /** The most it can be, whatever the timeout: what a stored last-seen time may lag behind by. */
    public static final long MAX_MILLIS = 30_000;

    private LastSeenTolerance() {
    }

    public static long of(long timeoutMillis) {
        return Math.min(timeoutMillis / 100, MAX_MILLIS);
    }

    /** When the heartbeat declares a sensor last seen at {@code lastSeenAt} lost: its timeout and tolerance later. */
    static long lostDeadline(long lastSeenAt, long timeoutMillis) {
        return lastSeenAt + timeoutMillis + of(timeoutMillis);
    }

    /** Whether a last-seen time applied in memory has moved on from the one written by more than the tolerance. */
    static boolean outgrown(long lastSeenAt, long writtenSeenAt, long timeoutMillis) {
        return lastSeenAt - writtenSeenAt > of(timeoutMillis);
    }
}
