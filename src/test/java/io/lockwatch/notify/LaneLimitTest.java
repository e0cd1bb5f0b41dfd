package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;

import io.lockwatch.notify.LaneLimit.Signal;
import org.junit.jupiter.api.Test;

/** The adaptive bound of a lane, a pure function of the answers it is given. */
class LaneLimitTest {

    static final long MS = 1_000_000;

    final LaneLimit limit = new LaneLimit(1, 4, 64, Duration.ofSeconds(15));

    @Test
    void itGrowsToItsMostWhileAFullLaneIsAnsweredFastWith2xx() {
        int before = limit.get();
        answerFull(20 * MS, 1);
        assertThat(limit.get()).as("one answer").isGreaterThan(before);

        answerFull(20 * MS, 300);
        assertThat(limit.get()).isEqualTo(64);
    }

    @Test
    void itDoesNotGrowWhileTheLaneIsLittleUsed() {
        for (int i = 0; i < 300; i++) {
            limit.onAnswer(20 * MS, 1, Signal.TAKEN);
        }
        assertThat(limit.get()).isEqualTo(4);
    }

    @Test
    void anOverloadCutsItByAQuarter() {
        answerFull(20 * MS, 300);
        for (Integer status : new Integer[] {429, 503, 500, 502, null}) {
            int before = limit.get();
            limit.onAnswer(20 * MS, before, LaneLimit.signal(status, false));
            assertThat(limit.get()).as("after %s", status == null ? "no answer in time" : status)
                    .isEqualTo((int) (before * LaneLimit.BACKOFF));
        }
    }

    @Test
    void aTwoHundredSlowerThanTheDeadlineIsAnOverloadToo() {
        answerFull(20 * MS, 300);
        limit.onAnswer(16_000 * MS, 64, Signal.TAKEN);
        assertThat(limit.get()).isEqualTo(48);
    }

    @Test
    void answersThatSayNothingOfCapacityLeaveItAlone() {
        answerFull(20 * MS, 10);
        int before = limit.get();
        for (int status : new int[] {400, 401, 404, 410, 413}) {
            limit.onAnswer(20 * MS, before, LaneLimit.signal(status, false));
        }
        limit.onAnswer(20 * MS, before, LaneLimit.signal(null, true));
        assertThat(limit.get()).isEqualTo(before);
    }

    @Test
    void itShrinksAsTheEndpointsLatencyRisesAndGrowsAgainAsItFalls() {
        answerFull(20 * MS, 300);
        answerFull(200 * MS, 20);
        int slowed = limit.get();
        assertThat(slowed).as("answers ten times slower").isLessThan(40);

        answerFull(20 * MS, 300);
        assertThat(limit.get()).as("fast again").isEqualTo(64);
    }

    @Test
    void itStaysWithinItsBounds() {
        for (int i = 0; i < 50; i++) {
            limit.onAnswer(20 * MS, 1, Signal.OVERLOADED);
        }
        assertThat(limit.get()).isEqualTo(1);
        answerFull(1, 1000);
        assertThat(limit.get()).isEqualTo(64);
        assertThatThrownBy(() -> new LaneLimit(0, 4, 64, Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new LaneLimit(4, 2, 64, Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void whatAnAnswerSays() {
        assertThat(LaneLimit.signal(200, false)).isEqualTo(Signal.TAKEN);
        assertThat(LaneLimit.signal(204, false)).isEqualTo(Signal.TAKEN);
        assertThat(LaneLimit.signal(429, false)).isEqualTo(Signal.OVERLOADED);
        assertThat(LaneLimit.signal(503, false)).isEqualTo(Signal.OVERLOADED);
        assertThat(LaneLimit.signal(null, false)).as("no answer: a timeout or a refused connection").isEqualTo(Signal.OVERLOADED);
        assertThat(LaneLimit.signal(404, false)).isEqualTo(Signal.UNRELATED);
        assertThat(LaneLimit.signal(301, false)).isEqualTo(Signal.UNRELATED);
        assertThat(LaneLimit.signal(null, true)).as("a target the guard refused").isEqualTo(Signal.UNRELATED);
    }

    /** {@code rounds} times, as many answers as the bound, each sent with the lane full, all taking {@code rtt}. */
    private void answerFull(long rtt, int rounds) {
        for (int r = 0; r < rounds; r++) {
            int n = limit.get();
            for (int i = 0; i < n; i++) {
                limit.onAnswer(rtt, n - i, Signal.TAKEN);
            }
        }
    }
}
