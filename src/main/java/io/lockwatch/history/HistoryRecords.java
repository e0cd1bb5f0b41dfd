package io.lockwatch.history;

import java.util.List;

/** What history holds and answers with. */
public final class HistoryRecords {

    private HistoryRecords() {
    }

    /** A valid reading as received; {@code readingId} is the same for every delivery of the same reading. */
    public record ReadingRecord(String readingId, String sensorId, int data, long measuredAt, long receivedAt,
                                String timeSource, boolean registered, String messageId) {
    }

    public record EventRecord(String sensorId, long sequence, String type, Integer state, Integer previousState,
                              long occurredAt) {
    }

    public record AttemptRecord(String notificationId, String clientId, String sensorId, String eventType, int attempt,
                                Integer statusCode, String error, int durationMs, long attemptedAt) {
    }

    /** Per UTC day: state changes and lost connections. */
    public record DailyCount(String day, long stateChanges, long connectionsLost) {
    }

    /** One page, newest first, and the cursor of the next (null at the end). */
    public record Page<T>(List<T> items, String nextCursor) {
    }
}
