package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

class LastSeenToleranceTest {

    static final long HOUR = Duration.ofHours(1).toMillis();
    static final long T0 = 1_764_000_000_000L;

    @Test
    void theToleranceIsAHundredthOfTheTimeoutAtMostThirtySeconds() {
        assertThat(LastSeenTolerance.of(Duration.ofMinutes(10).toMillis())).isEqualTo(6_000);
        assertThat(LastSeenTolerance.of(Duration.ofMinutes(50).toMillis())).isEqualTo(30_000);
        assertThat(LastSeenTolerance.of(HOUR)).isEqualTo(30_000);
        assertThat(LastSeenTolerance.of(Duration.ofDays(1).toMillis())).isEqualTo(LastSeenTolerance.MAX_MILLIS);
        assertThat(LastSeenTolerance.of(99)).isZero();
    }

    @Test
    void aSilenceIsDeclaredNeverBeforeTheTimeoutAndAtMostTheToleranceLate() {
        // the worst case: the last reading written is a tolerance older than the last one applied
        long written = T0;
        long lastApplied = T0 + LastSeenTolerance.of(HOUR);
        assertThat(LastSeenTolerance.outgrown(lastApplied, written, HOUR)).isFalse();

        long deadline = LastSeenTolerance.lostDeadline(written, HOUR);
        assertThat(deadline).isGreaterThanOrEqualTo(lastApplied + HOUR);
        assertThat(deadline - (written + HOUR)).isEqualTo(30_000);
    }

    @Test
    void aRepeatIsWrittenOnceItsLastSeenTimeHasMovedOnByMoreThanTheTolerance() {
        long tenMinutes = Duration.ofMinutes(10).toMillis();
        assertThat(LastSeenTolerance.outgrown(T0 + 6_000, T0, tenMinutes)).isFalse();
        assertThat(LastSeenTolerance.outgrown(T0 + 6_001, T0, tenMinutes)).isTrue();
        assertThat(LastSeenTolerance.outgrown(T0 + 30_000, T0, HOUR)).isFalse();
        assertThat(LastSeenTolerance.outgrown(T0 + 30_001, T0, HOUR)).isTrue();
        // a reading older than the one written (a late one) is never a reason to write
        assertThat(LastSeenTolerance.outgrown(T0 - 60_000, T0, HOUR)).isFalse();
    }
}
