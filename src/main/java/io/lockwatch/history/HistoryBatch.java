package io.lockwatch.history;

import java.util.ArrayList;
import java.util.List;

import io.lockwatch.history.HistoryRecords.ReadingRecord;
import io.lockwatch.infra.amqp.DeliveryTags;

/** Readings gathered for one insert into the history store, and the deliveries that carried them. */
public final class HistoryBatch {

    private final List<ReadingRecord> readings = new ArrayList<>();
    private final DeliveryTags deliveries = new DeliveryTags();

    public List<ReadingRecord> readings() {
        return readings;
    }

    public DeliveryTags deliveries() {
        return deliveries;
    }

    public int size() {
        return readings.size();
    }
}
