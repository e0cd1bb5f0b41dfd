package io.lockwatch.history;

import static io.lockwatch.history.ClickHouseHistoryStore.DATETIME_MAX_SECONDS;
import static io.lockwatch.history.ClickHouseHistoryStore.partitionBounds;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/** The partition bounds the ClickHouse store adds to its range queries (the store itself: ClickHouseHistoryStoreIT). */
class ClickHouseHistoryStoreTest {

    /** What ClickHouse stores in the partition column: the millisecond column divided by 1000. */
    static long partitionColumn(long millis) {
        return millis / 1000;
    }

    @Test
    void theBoundsAreTheSecondsOfTheRange() {
        long november = Instant.parse("2026-11-01T00:00:00Z").toEpochMilli();

        assertThat(partitionBounds(november - 1, november + 1)).containsExactly(november / 1000 - 1, november / 1000);
        assertThat(partitionBounds(november, november + 1000)).containsExactly(november / 1000, november / 1000);
        assertThat(partitionBounds(november - 1, november)).containsExactly(november / 1000 - 1, november / 1000 - 1);
    }

    @Test
    void noRowOfTheRangeIsOutsideTheBounds() {
        SplittableRandom random = new SplittableRandom(6);
        for (int i = 0; i < 100_000; i++) {
            long from = random.nextLong(0, (DATETIME_MAX_SECONDS + 1) * 1000);
            long to = Math.min(from + 1 + random.nextLong(400L * 86_400_000), (DATETIME_MAX_SECONDS + 1) * 1000);
            long[] bounds = partitionBounds(from, to);
            for (long row : new long[] {from, to - 1, from + random.nextLong(to - from)}) {
                assertThat(partitionColumn(row)).as("row %d of [%d, %d)", row, from, to)
                        .isBetween(bounds[0], bounds[1]);
            }
        }
    }

    @Test
    void aRangeBeyondWhatADateTimeHoldsOrAnEmptyOneIsNotBounded() {
        long[] everything = {0, DATETIME_MAX_SECONDS};
        assertThat(partitionBounds(-1, 1000)).containsExactly(everything);
        assertThat(partitionBounds(Long.MIN_VALUE, Long.MAX_VALUE)).containsExactly(everything);
        assertThat(partitionBounds(1000, (DATETIME_MAX_SECONDS + 1) * 1000 + 1)).containsExactly(everything);
        assertThat(partitionBounds(5000, 5000)).containsExactly(everything);
        assertThat(partitionBounds(0, (DATETIME_MAX_SECONDS + 1) * 1000)).containsExactly(everything);
    }
}
