package io.lockwatch.bench;

import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * What the service must end up with, computed from what was published: per sensor the data of its last
 * reading, its newest measured time, and how many times its data changed (the first reading being a change
 * from nothing). Readings are published in per-sensor time order on one queue with one consumer, so the
 * service's {@code sensor_state} and {@code sensor_events} must equal this exactly.
 *
 * <p>Sensor {@code i} (0-based) is {@code 'B' || lpad(to_hex(i + 1), 10, '0')}, as registered by
 * {@link BenchDatabase#registerSensors(int)}. Used from one thread at a time.
 */
final class Reference {

    /** What the benchmark's sensor ids start with. */
    static final String PREFIX = "B";
    private static final int MAX_SHOWN = 10;

    private final String[] ids;
    private final byte[] lastData;
    private final byte[] firstData;
    private final long[] lastTs;
    private final int[] changes;
    private long totalChanges;
    private long readings;

    Reference(int sensors) {
        ids = new String[sensors];
        lastData = new byte[sensors];
        firstData = new byte[sensors];
        lastTs = new long[sensors];
        changes = new int[sensors];
        for (int i = 0; i < sensors; i++) {
            ids[i] = sensorId(i);
            lastData[i] = -1;
        }
    }

    static String sensorId(int index) {
        return PREFIX + String.format("%010x", index + 1L);
    }

    /** The index of a sensor id, or -1 if it is not one of the benchmark's. */
    int indexOf(String sensorId) {
        if (sensorId == null || sensorId.length() != 11 || !sensorId.startsWith(PREFIX)) {
            return -1;
        }
        try {
            long i = Long.parseLong(sensorId.substring(1), 16) - 1;
            return i >= 0 && i < ids.length && ids[(int) i].equals(sensorId) ? (int) i : -1;
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    int sensors() {
        return ids.length;
    }

    String id(int sensor) {
        return ids[sensor];
    }

    /** The sensor's last published data, or -1 before its first reading. */
    int lastData(int sensor) {
        return lastData[sensor];
    }

    /** The measured time of the sensor's last published reading, 0 before its first. */
    long lastTs(int sensor) {
        return lastTs[sensor];
    }

    /** A measured time for the sensor's next reading: now, or later if needed to stay strictly increasing. */
    long nextTs(int sensor, long nowMillis) {
        return Math.max(nowMillis, lastTs[sensor] + 1);
    }

    /** Records a published reading. */
    void published(int sensor, int data, long ts) {
        if (ts <= lastTs[sensor]) {
            throw new IllegalArgumentException("ts must increase per sensor");
        }
        if (lastData[sensor] < 0) {
            firstData[sensor] = (byte) data;
        }
        if (lastData[sensor] != data) {
            changes[sensor]++;
            totalChanges++;
        }
        lastData[sensor] = (byte) data;
        lastTs[sensor] = ts;
        readings++;
    }

    /** How many times the sensor's data changed, its first reading included: its last event's sequence. */
    int changes(int sensor) {
        return changes[sensor];
    }

    /**
     * The state the sensor's event {@code sequence} (1-based) changed it to: data only flips, so it alternates
     * from the first reading's data.
     */
    int stateAt(int sensor, long sequence) {
        return firstData[sensor] ^ (int) ((sequence - 1) & 1);
    }

    long totalChanges() {
        return totalChanges;
    }

    long readings() {
        return readings;
    }

    /** Compares the service's result in PostgreSQL with this reference. */
    Verdict verify(BenchDatabase db) throws SQLException {
        List<String> shown = new ArrayList<>();
        long[] mismatches = {0};
        boolean[] seen = new boolean[ids.length];
        db.forEachState((id, state, sequence) -> {
            int i = indexOf(id);
            String problem = null;
            if (i < 0) {
                problem = "sensor_state has an unexpected sensor " + id;
            } else {
                seen[i] = true;
                Integer expected = lastData[i] < 0 ? null : (int) lastData[i];
                if (!java.util.Objects.equals(expected, state) || sequence != changes[i]) {
                    problem = id + ": expected state " + expected + " sequence " + changes[i]
                            + ", found state " + state + " sequence " + sequence;
                }
            }
            if (problem != null) {
                mismatches[0]++;
                if (shown.size() < MAX_SHOWN) {
                    shown.add(problem);
                }
            }
        });
        for (int i = 0; i < ids.length; i++) {
            if (!seen[i]) {
                mismatches[0]++;
                if (shown.size() < MAX_SHOWN) {
                    shown.add(ids[i] + ": no row in sensor_state");
                }
            }
        }
        long events = db.countEvents();
        if (events != totalChanges) {
            mismatches[0]++;
            if (shown.size() < MAX_SHOWN) {
                shown.add("sensor_events has " + events + " rows, expected " + totalChanges);
            }
        }
        return new Verdict(mismatches[0], shown, totalChanges, events);
    }

    /**
     * @param mismatches      sensors (and the event count) that differ from the reference
     * @param firstMismatches up to ten of them, described
     */
    record Verdict(long mismatches, List<String> firstMismatches, long expectedEvents, long eventsInDatabase) {
        boolean ok() {
            return mismatches == 0;
        }
    }
}
