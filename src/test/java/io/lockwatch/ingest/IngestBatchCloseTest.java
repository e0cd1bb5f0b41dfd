package io.lockwatch.ingest;

import static io.lockwatch.ingest.IngestBatch.closes;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;

/** When a batch closes: the rule IngestBatches applies as each message joins and on its timer. */
class IngestBatchCloseTest {

    static final int SIZE = 1000;
    static final long MS = 1_000_000L, INTERVAL = 50 * MS, MAX_WAIT = 200 * MS;
    static final BooleanSupplier FREE = () -> true, BUSY = () -> false;
    /** For rules that must not depend on the batch thread: reading it fails the test. */
    static final BooleanSupplier UNREAD = () -> {
        throw new AssertionError("the batch thread's state was read although it cannot change the outcome");
    };

    @Test
    void aFullBatchClosesAtOnceBusyOrNot() {
        assertThat(closes(SIZE, 0, 0, SIZE, INTERVAL, MAX_WAIT, UNREAD)).isTrue();
        assertThat(closes(SIZE - 1, 0, 0, SIZE, INTERVAL, MAX_WAIT, FREE)).isFalse();
    }

    @Test
    void withTheBatchThreadFreeABatchClosesAfterTheIntervalHoweverManyItHolds() {
        assertThat(closes(1, 49 * MS, 0, SIZE, INTERVAL, MAX_WAIT, FREE)).isFalse();
        assertThat(closes(1, 50 * MS, 0, SIZE, INTERVAL, MAX_WAIT, FREE)).isTrue();
        // a burst: not held back to grow while the thread could apply it
        assertThat(closes(900, 50 * MS, 0, SIZE, INTERVAL, MAX_WAIT, FREE)).isTrue();
    }

    @Test
    void whileTheBatchThreadIsBusyABatchGrowsUntilTheMaxWait() {
        assertThat(closes(10, 50 * MS, 0, SIZE, INTERVAL, MAX_WAIT, BUSY)).isFalse();
        assertThat(closes(900, 199 * MS, 0, SIZE, INTERVAL, MAX_WAIT, BUSY)).isFalse();
        assertThat(closes(10, 200 * MS, 0, SIZE, INTERVAL, MAX_WAIT, UNREAD)).isTrue();
    }

    @Test
    void aBatchNoMessageJoinedForTheIntervalClosesBusyOrNot() {
        // the timer's question: a trickle that stopped is not held back for the max wait while the thread is busy
        assertThat(closes(10, 120 * MS, 50 * MS, SIZE, INTERVAL, MAX_WAIT, UNREAD)).isTrue();
        assertThat(closes(10, 120 * MS, 49 * MS, SIZE, INTERVAL, MAX_WAIT, BUSY)).isFalse();
    }

    @Test
    void aYoungBatchDoesNotAskTheBatchThread() {
        // asked for every message that joins: the pool's lock is taken only once the interval has passed
        assertThat(closes(10, 49 * MS, 0, SIZE, INTERVAL, MAX_WAIT, UNREAD)).isFalse();
    }
}
