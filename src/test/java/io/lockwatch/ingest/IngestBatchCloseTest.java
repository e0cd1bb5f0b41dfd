package io.lockwatch.ingest;

import static io.lockwatch.ingest.IngestBatch.closes;
import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** When a batch closes: the rule the aggregator's completion predicate applies. */
class IngestBatchCloseTest {

    static final int SIZE = 1000;
    static final long MS = 1_000_000L, INTERVAL = 50 * MS, MAX_WAIT = 200 * MS;

    @Test
    void aFullBatchClosesAtOnceBusyOrNot() {
        assertThat(closes(SIZE, 0, SIZE, INTERVAL, MAX_WAIT, false)).isTrue();
        assertThat(closes(SIZE - 1, 0, SIZE, INTERVAL, MAX_WAIT, true)).isFalse();
    }

    @Test
    void withTheBatchThreadFreeABatchClosesAfterTheIntervalHoweverManyItHolds() {
        assertThat(closes(1, 49 * MS, SIZE, INTERVAL, MAX_WAIT, true)).isFalse();
        assertThat(closes(1, 50 * MS, SIZE, INTERVAL, MAX_WAIT, true)).isTrue();
        // a burst: not held back to grow while the thread could apply it
        assertThat(closes(900, 50 * MS, SIZE, INTERVAL, MAX_WAIT, true)).isTrue();
    }

    @Test
    void whileTheBatchThreadIsBusyABatchGrowsUntilTheMaxWait() {
        assertThat(closes(10, 50 * MS, SIZE, INTERVAL, MAX_WAIT, false)).isFalse();
        assertThat(closes(900, 199 * MS, SIZE, INTERVAL, MAX_WAIT, false)).isFalse();
        assertThat(closes(10, 200 * MS, SIZE, INTERVAL, MAX_WAIT, false)).isTrue();
    }
}
