package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import io.lockwatch.registry.Registry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The state a consumer holds in memory (issue 17): repeats within the last-seen tolerance are not written, the stored
 * deadline still never lets a silence be declared early, and what another writer did (another instance after a
 * partition changed hands, a transaction that failed, a crash) is never hidden by what is held. Each store here is an
 * instance of its own against the one database, with a clock of the test's.
 */
@SpringBootTest
class SensorStateHeldTest {

    private static final long TIMEOUT = 600_000; // the sensors' own timeout: a tolerance of 6 s

    @Autowired JdbcTemplate jdbc;
    @Autowired TransactionTemplate tx;
    @Autowired Registry registry;

    private final AtomicLong now = new AtomicLong(System.currentTimeMillis());

    @Test
    void aRepeatWithinTheToleranceIsNotWrittenAndTheStoredDeadlineCoversIt() {
        SensorStateStore store = instance();
        String sensor = newSensor();
        long t0 = now.get();

        store.apply(List.of(reading(sensor, 0, t0, null)), null);
        assertThat(stored(sensor)).containsExactly(t0, t0 + TIMEOUT + 6_000);

        store.apply(List.of(reading(sensor, 0, t0 + 5_000, null)), null);
        assertThat(stored(sensor)).as("5 s of last-seen time: within the tolerance, not written")
                .containsExactly(t0, t0 + TIMEOUT + 6_000);

        store.apply(List.of(reading(sensor, 0, t0 + 6_500, null)), null);
        assertThat(stored(sensor)).as("6.5 s: written").containsExactly(t0 + 6_500, t0 + 6_500 + TIMEOUT + 6_000);

        ApplyOutcome change = store.apply(List.of(reading(sensor, 1, t0 + 7_000, null)), null);
        assertThat(change.events()).extracting(SensorEvent::type).containsExactly(SensorEvent.STATE_CHANGED);
        assertThat(stored(sensor)).as("a change is always written").containsExactly(t0 + 7_000, t0 + 7_000 + TIMEOUT + 6_000);
    }

    /** What the batching asks before a transaction: a reading that may change its sensor's state is applied at once. */
    @Test
    void whatIsHeldTellsAChangeFromARepeatBeforeAnyTransaction() {
        SensorStateStore store = instance();
        String sensor = newSensor();
        long t0 = now.get();
        assertThat(store.mayChangeState(reading(sensor, 0, t0, null))).as("not held: it may").isTrue();

        store.apply(List.of(reading(sensor, 0, t0, null)), null);
        assertThat(store.mayChangeState(reading(sensor, 0, t0 + 1_000, null))).as("a repeat").isFalse();
        assertThat(store.mayChangeState(reading(sensor, 1, t0 + 1_000, null))).as("a change").isTrue();

        store.forget(Duration.ZERO);
        assertThat(store.mayChangeState(reading(sensor, 0, t0 + 1_000, null))).as("forgotten: it may again").isTrue();
    }

    /** Whatever the pace of the readings, the deadline stored is never before the last reading + the timeout. */
    @Test
    void theStoredDeadlineIsNeverEarlyAndAtMostTheToleranceLate() {
        SensorStateStore store = instance();
        String sensor = newSensor();
        Random random = new Random(17);
        long seen = now.get();
        for (int i = 0; i < 200; i++) {
            seen += random.nextInt(2_500);
            store.apply(List.of(reading(sensor, 0, seen, null)), null);
            long deadline = stored(sensor)[1];
            assertThat(deadline).as("reading %d", i).isGreaterThanOrEqualTo(seen + TIMEOUT)
                    .isLessThanOrEqualTo(seen + TIMEOUT + LastSeenTolerance.of(TIMEOUT));
        }
    }

    @Test
    void aRepeatIsWrittenOnceTheStoredDeadlineIsNearSoThatALossIsNeverHiddenByMemory() {
        SensorStateStore store = instance();
        String sensor = newSensor();
        long t0 = now.get();
        store.apply(List.of(reading(sensor, 0, t0, null)), null);

        // readings measured long ago, applied now (a backlog): the deadline they leave is near or past
        now.addAndGet(TIMEOUT);
        store.apply(List.of(reading(sensor, 0, t0 + 1_000, null)), null);
        assertThat(stored(sensor)[0]).isEqualTo(t0 + 1_000);

        // the heartbeat declares it lost; the next reading is a return from the silence, not a repeat
        jdbc.update("UPDATE sensor_state SET connectivity = 'lost', sequence = sequence + 1 WHERE sensor_id = ?", sensor);
        ApplyOutcome back = store.apply(List.of(reading(sensor, 0, t0 + 2_000, null)), null);
        assertThat(back.events()).extracting(SensorEvent::type, SensorEvent::sequence)
                .containsExactly(tuple(SensorEvent.CONNECTION_RESTORED, 3L));
    }

    @Test
    void stateTakenOverByAnotherInstanceMidStreamIsReadAgainWhenThePartitionComesBack() {
        SensorStateStore a = instance();
        SensorStateStore b = instance();
        String sensor = newSensor();
        long t0 = now.get();

        a.apply(List.of(reading(sensor, 0, t0, "m1"), reading(sensor, 0, t0 + 100, "m2")), null);
        // the partition moves to b, which applies a change a never saw
        a.forget(Duration.ofSeconds(15));
        ApplyOutcome onB = b.apply(List.of(reading(sensor, 1, t0 + 200, "m3")), null);
        assertThat(onB.events()).extracting(SensorEvent::state).containsExactly(1);

        // ... and back to a: held as open, the sensor is closed now, and an open reading is a change
        b.forget(Duration.ofSeconds(15));
        ApplyOutcome onA = a.apply(List.of(reading(sensor, 0, t0 + 300, "m4")), null);
        assertThat(onA.events()).extracting(SensorEvent::type, SensorEvent::state, SensorEvent::previousState,
                SensorEvent::sequence).containsExactly(tuple(SensorEvent.STATE_CHANGED, 0, 1, 3L));
        assertThat(jdbc.queryForObject("SELECT state FROM sensor_state WHERE sensor_id = ?", Integer.class, sensor))
                .isZero();
    }

    /**
     * The instance that gave a partition away may commit its last batch of it after the new owner read the sensor:
     * while the partition settles, the new owner writes every reading, so that its write misses the row the other
     * wrote, and decides again on it.
     */
    @Test
    void whileAPartitionSettlesEveryReadingIsWrittenSoThatTheFormerOwnersLastCommitIsSeen() {
        SensorStateStore a = instance();
        SensorStateStore b = instance();
        String sensor = newSensor();
        long t0 = now.get();
        b.apply(List.of(reading(sensor, 0, t0, null)), null);

        a.forget(Duration.ofSeconds(15)); // a takes the partition up
        a.apply(List.of(reading(sensor, 0, t0 + 1_000, null)), null);
        assertThat(stored(sensor)[0]).as("a repeat within the tolerance, written while settling").isEqualTo(t0 + 1_000);
        assertThat(b.apply(List.of(reading(sensor, 1, t0 + 1_500, null)), null).events()).hasSize(1);
        ApplyOutcome onA = a.apply(List.of(reading(sensor, 0, t0 + 2_000, null)), null);
        assertThat(onA.events()).as("held as open, it is closed now: the open reading is a change")
                .extracting(SensorEvent::state, SensorEvent::previousState, SensorEvent::sequence)
                .containsExactly(tuple(0, 1, 3L));

        now.addAndGet(16_000); // settled: repeats within the tolerance stay in memory again
        a.apply(List.of(reading(sensor, 0, t0 + 3_000, null)), null);
        assertThat(stored(sensor)[0]).isEqualTo(t0 + 2_000);
    }

    /** A batch whose transaction fails leaves nothing behind in memory: applied again, it does the same again. */
    @Test
    void aBatchThatIsRolledBackIsDecidedAgainFromTheTable() {
        SensorStateStore store = instance();
        String sensor = newSensor();
        long t0 = now.get();
        store.apply(List.of(reading(sensor, 0, t0, null)), null);

        String constraint = "test_refuses_" + sensor.toLowerCase();
        jdbc.execute("ALTER TABLE sensor_events ADD CONSTRAINT " + constraint + " CHECK (sensor_id <> '" + sensor
                + "') NOT VALID");
        try {
            assertThatThrownBy(() -> store.apply(List.of(reading(sensor, 1, t0 + 1_000, "c1")), null))
                    .isInstanceOf(DataAccessException.class);
        } finally {
            jdbc.execute("ALTER TABLE sensor_events DROP CONSTRAINT " + constraint);
        }
        ApplyOutcome again = store.apply(List.of(reading(sensor, 1, t0 + 1_000, "c1")), null);
        assertThat(again.events()).extracting(SensorEvent::state, SensorEvent::sequence).containsExactly(tuple(1, 2L));
    }

    /**
     * kill -9 with repeats applied in memory only: the instance that starts again reads what was written. The
     * deadline still covers the last reading acknowledged, a redelivered reading changes nothing, and no change is
     * notified twice or lost.
     */
    @Test
    void aCrashLosesAtMostTheToleranceOfLastSeenTimeAndNoChange() {
        SensorStateStore before = instance();
        String sensor = newSensor();
        long t0 = now.get();
        before.apply(List.of(reading(sensor, 0, t0, "k0")), null);
        before.apply(List.of(reading(sensor, 1, t0 + 1_000, "k1")), null);
        List<Reading> repeats = new ArrayList<>();
        for (int i = 2; i <= 5; i++) {
            repeats.add(reading(sensor, 1, t0 + i * 1_000L, "k" + i));
        }
        before.apply(repeats, null);
        assertThat(stored(sensor)[0]).as("the repeats are held in memory only").isEqualTo(t0 + 1_000);
        assertThat(stored(sensor)[1]).as("and the deadline covers them").isGreaterThanOrEqualTo(t0 + 5_000 + TIMEOUT);

        SensorStateStore after = instance(); // killed and started again: nothing held
        // the last batch, committed but not acknowledged, is delivered again; and the change before it, by a publisher
        // that retried
        ApplyOutcome redelivered = after.apply(List.of(reading(sensor, 1, t0 + 1_000, "k1"), repeats.get(3)), null);
        assertThat(redelivered.events()).isEmpty();
        assertThat(redelivered.duplicates()).isEqualTo(1);
        ApplyOutcome next = after.apply(List.of(reading(sensor, 0, t0 + 6_000, "k6")), null);
        assertThat(next.events()).extracting(SensorEvent::state, SensorEvent::previousState, SensorEvent::sequence)
                .containsExactly(tuple(0, 1, 3L));
        assertThat(jdbc.queryForList("SELECT state FROM sensor_events WHERE sensor_id = ? ORDER BY sequence",
                Integer.class, sensor)).containsExactly(0, 1, 0);
    }

    @Test
    void noMoreSensorsAreHeldThanConfigured() {
        SensorStateStore store = new SensorStateStore(jdbc, tx, Duration.ofHours(1), 2, Duration.ofSeconds(10), now::get);
        long t0 = now.get();
        store.apply(List.of(reading(newSensor(), 0, t0, null), reading(newSensor(), 0, t0, null),
                reading(newSensor(), 0, t0, null)), null);
        assertThat(store.heldSensors()).isEqualTo(2);
    }

    private SensorStateStore instance() {
        return new SensorStateStore(jdbc, tx, Duration.ofHours(1), 1000, Duration.ofSeconds(10), now::get);
    }

    /** The stored last-seen time and lost deadline, epoch ms. */
    private long[] stored(String sensor) {
        return jdbc.queryForObject("""
                SELECT round(extract(epoch FROM last_seen_at) * 1000)::bigint, round(extract(epoch FROM lost_deadline) * 1000)::bigint
                  FROM sensor_state WHERE sensor_id = ?""", (rs, i) -> new long[] {rs.getLong(1), rs.getLong(2)}, sensor);
    }

    private String newSensor() {
        String id = "H" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);
        registry.createSensor(id, "Held state test, room " + id, (int) (TIMEOUT / 1000));
        return id;
    }

    private static Reading reading(String sensor, int data, long at, String messageId) {
        return new Reading(sensor, data, at, Reading.TimeSource.READING, at, messageId);
    }
}
