package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;

import org.junit.jupiter.api.Test;

class RetryPolicyTest {

    static final Instant NOW = Instant.parse("2026-11-24T03:00:00Z");
    static final List<Duration> SCHEDULE = List.of(Duration.ofSeconds(10), Duration.ofMinutes(1));

    @Test
    void aSuccessIsDeliveredWhateverTheAttempt() {
        assertThat(policy(0.5).after(3, false, 200, null, NOW)).isInstanceOf(RetryPolicy.Delivered.class);
    }

    @Test
    void eachFailureWaitsItsDelayGiveOrTakeAFifthThenTheLastIsDead() {
        assertThat(retryAt(policy(0.0).after(1, true, 500, null, NOW))).isEqualTo(NOW.plusSeconds(8));
        assertThat(retryAt(policy(0.5).after(1, true, 500, null, NOW))).isEqualTo(NOW.plusSeconds(10));
        assertThat(retryAt(policy(0.999999).after(1, true, 500, null, NOW))).isEqualTo(NOW.plusSeconds(12));
        assertThat(retryAt(policy(0.5).after(2, true, null, null, NOW))).isEqualTo(NOW.plusSeconds(60));
        assertThat(policy(0.5).after(3, true, 500, null, NOW)).isInstanceOf(RetryPolicy.Dead.class);
        assertThat(policy(0.5).maxAttempts()).isEqualTo(3);
    }

    @Test
    void retryAfterOn429Or503PushesTheNextAttemptUpToTheCap() {
        assertThat(retryAt(policy(0.5).after(1, true, 429, "30", NOW))).isEqualTo(NOW.plusSeconds(30));
        assertThat(retryAt(policy(0.5).after(1, true, 503, "999999", NOW))).isEqualTo(NOW.plus(Duration.ofHours(1)));
        String date = DateTimeFormatter.RFC_1123_DATE_TIME.format(NOW.plusSeconds(45).atZone(ZoneOffset.UTC));
        assertThat(retryAt(policy(0.5).after(1, true, 503, date, NOW))).isEqualTo(NOW.plusSeconds(45));
        // shorter than the schedule's own delay, or on another status: the schedule wins
        assertThat(retryAt(policy(0.5).after(1, true, 429, "1", NOW))).isEqualTo(NOW.plusSeconds(10));
        assertThat(retryAt(policy(0.5).after(1, true, 500, "30", NOW))).isEqualTo(NOW.plusSeconds(10));
        assertThat(retryAt(policy(0.5).after(1, true, 429, "soon", NOW))).isEqualTo(NOW.plusSeconds(10));
    }

    private static RetryPolicy policy(double random) {
        return new RetryPolicy(SCHEDULE, Duration.ofHours(1), () -> random);
    }

    private static Instant retryAt(RetryPolicy.Decision d) {
        assertThat(d).isInstanceOf(RetryPolicy.Retry.class);
        return ((RetryPolicy.Retry) d).at();
    }
}
