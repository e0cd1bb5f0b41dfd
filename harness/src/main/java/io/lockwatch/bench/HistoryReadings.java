package io.lockwatch.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.lockwatch.history.HistoryRecords.ReadingRecord;

/**
 * The readings of a history fill, in the order they are published, as ingest hands them to the history queue:
 * one message a batch, a JSON array of {@link ReadingRecord}s.
 *
 * <p>Reading {@code i} of {@code N} is measured at {@code windowStart + floor(i * span / N)}: times increase
 * strictly (the span allows at most one reading per millisecond), so no two readings share a sensor and a time
 * and each is a distinct row of the table. Each reading belongs to a sensor drawn at random, so a sensor has
 * about N / sensors readings at random times (some more, some fewer: some range queries need a second page).
 * The readings carry their own time and no message id, so their id is {@code sensor@time=data}, as ingest
 * derives it. The same seed and parameters give the same readings.
 */
final class HistoryReadings {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final long rows;
    private final long windowStart;
    private final double spacing;
    private final String[] sensorIds;
    private final SplittableRandom random;
    private long next;

    HistoryReadings(long rows, int sensors, long windowStart, long windowEnd, long seed) {
        this.rows = rows;
        this.windowStart = windowStart;
        this.spacing = (double) (windowEnd - windowStart) / rows;
        this.sensorIds = new String[sensors];
        for (int s = 0; s < sensors; s++) {
            sensorIds[s] = sensorId(s);
        }
        this.random = new SplittableRandom(seed);
    }

    /** The id of sensor {@code s} (0-based): {@code H} and ten hex digits. */
    static String sensorId(int s) {
        return "H" + String.format("%010x", s + 1);
    }

    boolean hasNext() {
        return next < rows;
    }

    /** The next {@code n} readings (fewer at the end). */
    List<ReadingRecord> next(int n) {
        List<ReadingRecord> out = new ArrayList<>(n);
        for (int k = 0; k < n && next < rows; k++, next++) {
            String sensor = sensorIds[random.nextInt(sensorIds.length)];
            int data = random.nextInt(2);
            long measuredAt = windowStart + (long) Math.floor(next * spacing);
            long receivedAt = measuredAt + 20 + random.nextInt(480);
            out.add(new ReadingRecord(sensor + "@" + measuredAt + "=" + data, sensor, data, measuredAt, receivedAt,
                    "reading", true, null));
        }
        return out;
    }

    /** The body of a history message, written as ingest writes it ({@code HistorySteps.handOver}). */
    static byte[] body(List<ReadingRecord> readings) throws JsonProcessingException {
        return JSON.writeValueAsBytes(readings);
    }
}
