package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;

import javax.sql.DataSource;

import io.lockwatch.registry.Registry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * How a batch meets what other transactions do to its sensors. A batch reads its sensors without locking them, and
 * writes each back only if no other transaction changed it in between; a sensor that was changed is decided again
 * on its row as it is now. In the conflict tests the other transaction holds the sensor's row while the batch is
 * applied, so that the batch's write has to wait for it, and changes it before it lets go: the way the heartbeat
 * declaring a sensor lost, or another instance's batch, meets a batch.
 */
@SpringBootTest
class SensorStateConflictTest {

    @Autowired SensorStateStore store;
    @Autowired Registry registry;
    @Autowired JdbcTemplate jdbc;
    @Autowired DataSource dataSource;

    @Test
    void aSensorDeclaredLostWhileTheBatchWasDecidedIsRestoredAndThenChanged() throws Exception {
        long t0 = System.currentTimeMillis();
        String sensor = openSensorAt(t0);

        ApplyOutcome outcome = whileHeldBy(sensor, """
                UPDATE sensor_state SET connectivity = 'lost', lost_at = now(), sequence = sequence + 1
                 WHERE sensor_id = '%s'""".formatted(sensor),
                () -> store.apply(List.of(reading(sensor, 1, t0 + 1000)), null));

        // decided on the first version (online, sequence 1), the batch would have written sequence 2 over the
        // heartbeat's, or been dropped; decided again it sees the loss (sequence 2) and comes back from it
        assertThat(outcome.applied()).isEqualTo(1);
        assertThat(outcome.events()).extracting(SensorEvent::type, SensorEvent::sequence).containsExactly(
                tuple(SensorEvent.CONNECTION_RESTORED, 3L), tuple(SensorEvent.STATE_CHANGED, 4L));
        Map<String, Object> row = jdbc.queryForMap(
                "SELECT state, sequence, connectivity FROM sensor_state WHERE sensor_id = ?", sensor);
        assertThat(row).containsEntry("state", 1).containsEntry("sequence", 4L)
                .containsEntry("connectivity", "online");
    }

    @Test
    void aChangeAnotherBatchAppliedMeanwhileIsNotAppliedTwice() throws Exception {
        long t0 = System.currentTimeMillis();
        String sensor = openSensorAt(t0);

        // the other batch took the same newer reading (another instance, the same message) and committed first
        ApplyOutcome outcome = whileHeldBy(sensor, """
                UPDATE sensor_state SET state = 1, sequence = sequence + 1, last_reading_at = to_timestamp(%d / 1000.0),
                       last_seen_at = to_timestamp(%d / 1000.0)
                 WHERE sensor_id = '%s'""".formatted(t0 + 1000, t0 + 1000, sensor),
                () -> store.apply(List.of(reading(sensor, 1, t0 + 1000)), null));

        assertThat(outcome.events()).as("the change is the other batch's, not a second one").isEmpty();
        // measured at the same moment as the newest applied: taken, as a repeat of the state it finds
        assertThat(outcome.applied()).isEqualTo(1);
        assertThat(jdbc.queryForObject("SELECT sequence FROM sensor_state WHERE sensor_id = ?", Long.class, sensor))
                .isEqualTo(2L);
    }

    @Test
    void aSensorDeletedWhileTheBatchWasDecidedIsUnknown() throws Exception {
        String sensor = newSensor();
        String other = newSensor();
        long t0 = System.currentTimeMillis();

        ApplyOutcome outcome = whileHeldBy(sensor, "DELETE FROM sensors WHERE id = '%s'".formatted(sensor),
                () -> store.apply(List.of(reading(sensor, 1, t0), reading(other, 1, t0)), null));

        assertThat(outcome.unknown()).isEqualTo(1);
        assertThat(outcome.applied()).isEqualTo(1);
        assertThat(outcome.events()).extracting(SensorEvent::sensorId).containsExactly(other);
        assertThat(outcome.registered()).containsExactly(other);
    }

    /**
     * Ingest reads a sensor's own timeout from the copy in sensor_state (V11), which the database keeps equal to the
     * registry's: set when the sensor is registered, changed and cleared with it.
     */
    @Test
    void theDeadlineFollowsTheSensorsOwnTimeoutAsRegisteredAndAsChanged() {
        String sensor = "C" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);
        registry.createSensor(sensor, "Timeout test", 600);
        long t0 = System.currentTimeMillis();
        store.apply(List.of(reading(sensor, 0, t0)), null);
        // the timeout and its last-seen tolerance, 1% of it (LastSeenTolerance)
        assertThat(deadlineAfterLastSeen(sensor)).isEqualTo(606_000);

        registry.updateSensor(sensor, null, true, 90);
        store.apply(List.of(reading(sensor, 1, t0 + 1000)), null);
        assertThat(deadlineAfterLastSeen(sensor)).isEqualTo(90_900);

        registry.updateSensor(sensor, null, true, null);
        store.apply(List.of(reading(sensor, 0, t0 + 2000)), null);
        assertThat(deadlineAfterLastSeen(sensor)).as("back to the default, 1 h, and 30 s").isEqualTo(3_630_000);
    }

    private long deadlineAfterLastSeen(String sensor) {
        return jdbc.queryForObject("SELECT round(extract(epoch FROM lost_deadline - last_seen_at) * 1000)::bigint FROM sensor_state "
                + "WHERE sensor_id = ?", Long.class, sensor);
    }

    /**
     * Runs {@code batch} while another transaction holds {@code sensor}'s row; once the batch waits for that row,
     * the other transaction runs {@code change} and commits.
     */
    private ApplyOutcome whileHeldBy(String sensor, String change, java.util.concurrent.Callable<ApplyOutcome> batch)
            throws Exception {
        try (Connection other = dataSource.getConnection(); Statement st = other.createStatement()) {
            other.setAutoCommit(false);
            int holder;
            try (var rs = st.executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                holder = rs.getInt(1);
            }
            st.execute("SELECT 1 FROM sensor_state WHERE sensor_id = '%s' FOR UPDATE".formatted(sensor));
            CompletableFuture<ApplyOutcome> applied = CompletableFuture.supplyAsync(() -> {
                try {
                    return batch.call();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> applied.isDone() || waitingForALockHeldBy(holder));
            assertThat(applied).as("the batch waits for the row the other transaction holds").isNotDone();
            st.execute(change);
            other.commit();
            return applied.get();
        }
    }

    private boolean waitingForALockHeldBy(int holder) {
        return jdbc.queryForObject("""
                SELECT count(*) FROM pg_stat_activity WHERE ? = ANY (pg_blocking_pids(pid))""", Integer.class, holder) > 0;
    }

    /** A new sensor, online and open (sequence 1) since {@code at}. */
    private String openSensorAt(long at) {
        String sensor = newSensor();
        store.apply(List.of(reading(sensor, 0, at)), null);
        return sensor;
    }

    private String newSensor() {
        String id = "C" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 8);
        registry.createSensor(id, "Conflict test, room " + id, null);
        return id;
    }

    private static Reading reading(String sensor, int data, long at) {
        return new Reading(sensor, data, at, Reading.TimeSource.READING, at, null);
    }
}
