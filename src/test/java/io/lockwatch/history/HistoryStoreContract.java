package io.lockwatch.history;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.lockwatch.history.HistoryRecords.DailyCount;
import io.lockwatch.history.HistoryRecords.Page;
import io.lockwatch.history.HistoryRecords.ReadingRecord;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;

/**
 * The questions history answers, asked of either store: PostgreSQL on the embedded default
 * ({@link PostgresHistoryStoreTest}), ClickHouse against the real server ({@code ClickHouseHistoryStoreIT}).
 */
abstract class HistoryStoreContract {

    static final long DAY = 86_400_000L;
    static final long T0 = 1_795_000_000_000L - 1_795_000_000_000L % DAY; // a UTC midnight in 2026

    @Autowired
    HistoryStore store;

    /** Records events as the flows do, so that the store can answer for them. */
    abstract void recordEvent(String sensor, long sequence, String type, Integer state, Integer previous, long at);

    static String sensor() {
        return "Y" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
    }

    static ReadingRecord reading(String sensor, int i) {
        return new ReadingRecord(sensor + "/m" + i, sensor, i % 2, T0 + i * 1000L, T0 + i * 1000L + 5, "reading", true, "m" + i);
    }

    @Test
    void readingsOfASensorComeNewestFirstInPagesAndOnlyInTheirRange() {
        String s = sensor(), other = sensor();
        List<ReadingRecord> written = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            written.add(reading(s, i));
            written.add(reading(other, i));
        }
        store.writeReadings(written);

        List<ReadingRecord> all = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            Page<ReadingRecord> page = store.readings(s, T0 + 2000, T0 + 22_000, 7, cursor);
            all.addAll(page.items());
            cursor = page.nextCursor();
            pages++;
        } while (cursor != null);

        assertThat(pages).isEqualTo(3);
        assertThat(all).extracting(ReadingRecord::measuredAt).hasSize(20).isSortedAccordingTo((a, b) -> Long.compare(b, a));
        assertThat(all.get(0)).isEqualTo(reading(s, 21));
        assertThat(all.get(19)).isEqualTo(reading(s, 2));
    }

    @Test
    void aReadingWrittenTwiceIsShownOnce() {
        String s = sensor();
        store.writeReadings(List.of(reading(s, 1), reading(s, 2)));
        store.writeReadings(List.of(reading(s, 2), reading(s, 3))); // a batch redelivered after a crash

        assertThat(store.readings(s, T0, T0 + DAY, 100, null).items()).extracting(ReadingRecord::readingId)
                .containsExactly(s + "/m3", s + "/m2", s + "/m1");
    }

    @Test
    void unregisteredSensorsAndMissingMessageIdsAreKeptAsSuch() {
        String s = sensor();
        ReadingRecord r = new ReadingRecord(s + "@" + T0 + "=1", s, 1, T0, T0 + 3, "receipt", false, null);
        store.writeReadings(List.of(r));

        assertThat(store.readings(s, T0, T0 + 1, 10, null).items()).containsExactly(r);
    }

    @Test
    void everyCharacterOfAStringIsKeptExactly() {
        String s = sensor();
        String id = "q'uo\"te\\back\tslash\nnew line ünï €";
        ReadingRecord r = new ReadingRecord(s + "/" + id, s, 0, T0, T0 + 3, "reading", true, id);
        store.writeReadings(List.of(r));

        assertThat(store.readings(s, T0, T0 + 1, 10, null).items()).containsExactly(r);
    }

    @Test
    void aRangeIsExactToTheMillisecondAcrossAMonthBoundary() {
        String s = sensor();
        long november = java.time.Instant.parse("2026-11-01T00:00:00Z").toEpochMilli();
        ReadingRecord lastOfOctober = new ReadingRecord(s + "/oct", s, 0, november - 1, november, "reading", true, "oct");
        ReadingRecord firstOfNovember = new ReadingRecord(s + "/nov", s, 1, november, november + 1, "reading", true, "nov");
        store.writeReadings(List.of(lastOfOctober, firstOfNovember));

        assertThat(store.readings(s, november - 1, november + 1, 10, null).items())
                .containsExactly(firstOfNovember, lastOfOctober);
        assertThat(store.readings(s, november - 1, november, 10, null).items()).containsExactly(lastOfOctober);
        assertThat(store.readings(s, november, november + 1, 10, null).items()).containsExactly(firstOfNovember);
        assertThat(store.readings(s, november - DAY, november - 1, 10, null).items()).isEmpty();
        assertThat(store.readings(s, november + 1, november + DAY, 10, null).items()).isEmpty();
    }

    @Test
    void eventsComeNewestFirstAndDailyCountsAddUpPerUtcDay() {
        String s = sensor(), t = sensor();
        recordEvent(s, 1, "sensor.state_changed", 1, null, T0 + 1000);
        recordEvent(s, 2, "sensor.state_changed", 0, 1, T0 + 2000);
        recordEvent(s, 3, "sensor.connection_lost", 0, null, T0 + 3_600_000);
        recordEvent(s, 4, "sensor.connection_restored", 0, null, T0 + DAY + 10);
        recordEvent(s, 5, "sensor.state_changed", 1, 0, T0 + DAY + 20);
        recordEvent(t, 1, "sensor.state_changed", 1, null, T0 + DAY + 30);

        Page<HistoryRecords.EventRecord> first = store.events(s, T0, T0 + 2 * DAY, 3, null);
        assertThat(first.items()).extracting(HistoryRecords.EventRecord::sequence).containsExactly(5L, 4L, 3L);
        assertThat(store.events(s, T0, T0 + 2 * DAY, 3, first.nextCursor()).items())
                .extracting(HistoryRecords.EventRecord::sequence).containsExactly(2L, 1L);
        assertThat(first.items().get(2).previousState()).isNull();

        List<DailyCount> counts = store.dailyCounts(List.of(s, t), T0, T0 + 2 * DAY);
        String day0 = java.time.LocalDate.ofEpochDay(T0 / DAY).toString();
        String day1 = java.time.LocalDate.ofEpochDay(T0 / DAY + 1).toString();
        assertThat(counts).containsExactly(new DailyCount(day0, 2, 1), new DailyCount(day1, 2, 0));
    }
}
