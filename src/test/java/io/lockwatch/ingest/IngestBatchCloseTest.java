package io.lockwatch.ingest;

import static io.lockwatch.ingest.IngestBatch.closes;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;

/** When a batch closes: the rule IngestBatches applies as each message joins, as its thread frees and on its timer. */
class IngestBatchCloseTest {

    static final int SIZE = 1000;
    static final long MS = 1_000_000L, MAX_WAIT = 200 * MS;
    static final BooleanSupplier FREE = () -> true, BUSY = () -> false;
    /** Whether the batch holds a reading that may change its sensor's state. */
    static final boolean CHANGE = true, REPEATS = false;
    /** For rules that must not depend on the batch thread: reading it fails the test. */
    static final BooleanSupplier UNREAD = () -> {
        throw new AssertionError("the batch thread's state was read although it cannot change the outcome");
    };

    @Test
    void aFullBatchClosesAtOnceBusyOrNot() {
        assertThat(closes(SIZE, 0, SIZE, 0, MAX_WAIT, REPEATS, UNREAD)).isTrue();
        assertThat(closes(SIZE - 1, 0, SIZE, 0, MAX_WAIT, REPEATS, BUSY)).isFalse();
    }

    @Test
    void byDefaultABatchClosesTheMomentTheBatchThreadIsFree() {
        // a reading alone is not held back for company
        assertThat(closes(1, 0, SIZE, 0, MAX_WAIT, REPEATS, FREE)).isTrue();
        assertThat(closes(900, 0, SIZE, 0, MAX_WAIT, REPEATS, FREE)).isTrue();
    }

    @Test
    void whileTheBatchThreadIsBusyABatchGrowsUntilTheMaxWait() {
        assertThat(closes(1, 0, SIZE, 0, MAX_WAIT, REPEATS, BUSY)).isFalse();
        assertThat(closes(900, 199 * MS, SIZE, 0, MAX_WAIT, REPEATS, BUSY)).isFalse();
        assertThat(closes(10, 200 * MS, SIZE, 0, MAX_WAIT, REPEATS, UNREAD)).isTrue();
    }

    @Test
    void anIntervalSetHoldsABatchBackToGatherEvenWithTheThreadFree() {
        long interval = 50 * MS;
        assertThat(closes(1, 49 * MS, SIZE, interval, MAX_WAIT, REPEATS, UNREAD)).as("young: the thread is not asked").isFalse();
        assertThat(closes(1, 50 * MS, SIZE, interval, MAX_WAIT, REPEATS, FREE)).isTrue();
        assertThat(closes(1, 50 * MS, SIZE, interval, MAX_WAIT, REPEATS, BUSY)).isFalse();
    }

    @Test
    void aChangeClosesItsBatchTheMomentTheThreadIsFreeWhileRepeatsWaitForTheInterval() {
        long interval = 50 * MS;
        assertThat(closes(1, 0, SIZE, interval, MAX_WAIT, CHANGE, FREE)).as("a door's change is not held back").isTrue();
        assertThat(closes(1, 0, SIZE, interval, MAX_WAIT, REPEATS, UNREAD)).as("repeats gather").isFalse();
        assertThat(closes(40, 10 * MS, SIZE, interval, MAX_WAIT, CHANGE, BUSY)).as("busy: it grows").isFalse();
        assertThat(closes(40, 200 * MS, SIZE, interval, MAX_WAIT, REPEATS, UNREAD)).isTrue();
    }
}
