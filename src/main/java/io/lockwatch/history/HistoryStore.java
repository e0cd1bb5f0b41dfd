package io.lockwatch.history;

import java.util.Collection;
import java.util.List;

import io.lockwatch.history.HistoryRecords.AttemptRecord;
import io.lockwatch.history.HistoryRecords.DailyCount;
import io.lockwatch.history.HistoryRecords.EventRecord;
import io.lockwatch.history.HistoryRecords.Page;
import io.lockwatch.history.HistoryRecords.ReadingRecord;

/**
 * Where history is kept: ClickHouse in production, PostgreSQL on the embedded default. Both answer the same
 * questions the same way; a reading written twice (a redelivery) is shown once.
 */
public interface HistoryStore {

    /**
     * The times lockwatch keeps, in epoch ms: from 1970 to the last second a ClickHouse DateTime holds
     * (2106-02-07T06:28:15Z). A time outside them, in a cursor or a query, names nothing that can be stored.
     */
    long EARLIEST_MS = 0;
    long LATEST_MS = ClickHouseHistoryStore.DATETIME_MAX_SECONDS * 1000 + 999;

    /** One insert for the whole list. */
    void writeReadings(List<ReadingRecord> readings);

    /** Readings of a sensor measured in [from, to), newest first. */
    Page<ReadingRecord> readings(String sensorId, long from, long to, int limit, String cursor);

    /** Events of a sensor that occurred in [from, to), newest first. */
    Page<EventRecord> events(String sensorId, long from, long to, int limit, String cursor);

    /** Delivery attempts, oldest first, of a notification, or of a client or sensor in [from, to). */
    List<AttemptRecord> attempts(AttemptFilter filter, long from, long to, int limit);

    /** Per UTC day in [from, to): state changes and lost connections of these sensors. */
    List<DailyCount> dailyCounts(Collection<String> sensorIds, long from, long to);

    /** Exactly one of the fields is set. */
    record AttemptFilter(String notificationId, String clientId, String sensorId) {
    }
}
