package io.lockwatch.heartbeat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import io.lockwatch.ingest.IngestProperties;
import io.lockwatch.ingest.LastSeenTolerance;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.NotifyBuilder;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.core.Message;
import org.springframework.amqp.core.MessageProperties;
import org.springframework.amqp.rabbit.core.RabbitTemplate;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;

/** Connectivity with a 3 s timeout and a scan every half second, on the embedded default. */
@CamelSpringBootTest
@SpringBootTest(properties = {"lockwatch.heartbeat.timeout=3s",
        // small, so that 2,000 sensors due at once take several lists and several transactions each
        "lockwatch.heartbeat.scan-batch=150",
        // two device profiles, whose timeouts their sensors without one of their own take
        "lockwatch.profiles.quick-door.adapter=chirpstack", "lockwatch.profiles.quick-door.door-field=door",
        "lockwatch.profiles.quick-door.closed-when=1", "lockwatch.profiles.quick-door.open-when=0",
        "lockwatch.profiles.quick-door.heartbeat-timeout=1s",
        "lockwatch.profiles.patient-door.adapter=chirpstack", "lockwatch.profiles.patient-door.door-field=door",
        "lockwatch.profiles.patient-door.closed-when=1", "lockwatch.profiles.patient-door.open-when=0",
        "lockwatch.profiles.patient-door.heartbeat-timeout=60s"})
class HeartbeatRouteTest {

    @Autowired RabbitTemplate rabbit;
    @Autowired JdbcTemplate jdbc;
    @Autowired IngestProperties ingest;
    @Autowired HeartbeatScan heartbeat;
    @Autowired CamelContext camel;
    @Autowired io.lockwatch.registry.Registry registry;
    @Autowired HeartbeatProperties heartbeatProperties;
    @Autowired io.lockwatch.adapters.DeviceProfiles profiles;

    @Test
    void aSilentSensorIsLostExactlyOnceAndRestoredExactlyOnceBeforeItsChange() {
        String s = sensor(null);
        long t = System.currentTimeMillis();
        publish(s, 1, t);

        await().atMost(Duration.ofSeconds(15)).until(() -> events(s).contains("2:sensor.connection_lost"));
        assertThat(connectivity(s)).isEqualTo("lost");
        // three more scans: still one lost event for this silence
        assertThat(scans(3).matches(10, TimeUnit.SECONDS)).isTrue();
        assertThat(events(s)).containsExactly("1:sensor.state_changed", "2:sensor.connection_lost");
        // the deadline: the timeout and its last-seen tolerance, 1% of it
        assertThat(lostAtDeadline(s)).isEqualTo(t + 3000 + LastSeenTolerance.of(3000));

        publish(s, 0, System.currentTimeMillis());

        await().atMost(Duration.ofSeconds(10)).until(() -> events(s).size() == 4);
        assertThat(events(s)).containsExactly("1:sensor.state_changed", "2:sensor.connection_lost",
                "3:sensor.connection_restored", "4:sensor.state_changed");
        assertThat(connectivity(s)).isEqualTo("online");
    }

    @Test
    void aSensorNeverHeardFromStaysUnknownAndSilent() {
        String s = sensor(null);
        NotifyBuilder pastTheTimeout = scans(8); // 4 s of scans, past the 3 s timeout

        assertThat(pastTheTimeout.matches(15, TimeUnit.SECONDS)).isTrue();

        assertThat(connectivity(s)).isEqualTo("unknown");
        assertThat(events(s)).isEmpty();
    }

    @Test
    void aSensorsOwnTimeoutIsHonoured() {
        String quick = sensor(1);
        String patient = sensor(60);
        long t = System.currentTimeMillis();
        publish(quick, 1, t);
        publish(patient, 1, t);

        await().atMost(Duration.ofSeconds(10)).until(() -> "lost".equals(connectivity(quick)));
        assertThat(lostAtDeadline(quick)).isEqualTo(t + 1000 + LastSeenTolerance.of(1000));
        // past the 3 s default: the patient sensor's own 60 s counts
        assertThat(scans(8).matches(15, TimeUnit.SECONDS)).isTrue();
        assertThat(connectivity(patient)).isEqualTo("online");
    }

    @Test
    void aProfilesTimeoutCountsForItsSensorsWithoutOneOfTheirOwn() {
        String quick = sensor(null, "quick-door");
        String ownTimeout = sensor(60, "quick-door");
        String patient = sensor(null, "patient-door");
        long t = System.currentTimeMillis();
        publish(quick, 1, t);
        publish(ownTimeout, 1, t);
        publish(patient, 1, t);

        await().atMost(Duration.ofSeconds(10)).until(() -> "lost".equals(connectivity(quick)));
        assertThat(lostAtDeadline(quick)).isEqualTo(t + 1000 + LastSeenTolerance.of(1000));
        // past the 3 s default: the sensor's own 60 s, and the patient profile's 60 s, count
        assertThat(scans(8).matches(15, TimeUnit.SECONDS)).isTrue();
        assertThat(connectivity(ownTimeout)).isEqualTo("online");
        assertThat(connectivity(patient)).isEqualTo("online");
        assertThat(timeoutInState(ownTimeout)).isEqualTo(60);
        assertThat(timeoutInState(patient)).isEqualTo(60);

        // given the quick profile, the patient sensor's deadline follows it at once: lost
        registry.updateSensor(patient, null, false, null, false, null, false, null, true,
                new io.lockwatch.registry.Registry.Device("quick-door", "dev-" + patient));
        assertThat(timeoutInState(patient)).isEqualTo(1);
        // (the stored last-seen time may lag by the largest tolerance, which the new deadline allows for)
        assertThat(deadlineAfterLastSeen(patient)).isEqualTo(1000 + LastSeenTolerance.MAX_MILLIS);
        // and without a profile, the default's 3 s
        registry.updateSensor(patient, null, false, null, false, null, false, null, true, null);
        assertThat(timeoutInState(patient)).isNull();
        assertThat(deadlineAfterLastSeen(patient)).isEqualTo(3000 + LastSeenTolerance.MAX_MILLIS);
    }

    @Test
    void aProfilesTimeoutChangedByConfigurationIsTakenAtTheStart() {
        String s = sensor(null, "patient-door");
        String own = sensor(30, "patient-door");
        jdbc.update("UPDATE sensor_state SET last_seen_at = now(), lost_deadline = now() + interval '60 seconds' "
                + "WHERE sensor_id IN (?, ?)", s, own);
        java.util.Map<String, Integer> changed = new java.util.HashMap<>(profiles.heartbeatTimeouts());
        changed.put("patient-door", 7200);
        changed.remove("quick-door");
        try {
            new HeartbeatScan(jdbc, new org.springframework.transaction.support.TransactionTemplate(
                    new org.springframework.jdbc.datasource.DataSourceTransactionManager(jdbc.getDataSource())),
                    null, heartbeatProperties, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), null,
                    changed).reconcileTimeouts();

            assertThat(timeoutInState(s)).isEqualTo(7200);
            assertThat(deadlineSecondsAway(s)).isBetween(7100L, 7300L);
            assertThat(timeoutInState(own)).isEqualTo(30); // its own stays
            assertThat(jdbc.queryForList("SELECT profile FROM profile_heartbeat_timeouts", String.class))
                    .contains("patient-door").doesNotContain("quick-door");
            // a sensor registered now takes the stored one
            assertThat(timeoutInState(sensor(null, "patient-door"))).isEqualTo(7200);
        } finally {
            heartbeat.reconcileTimeouts(); // as configured again
        }
        assertThat(timeoutInState(s)).isEqualTo(60);
        assertThat(deadlineSecondsAway(s)).isLessThan(100L);
    }

    /** A registration under way (a long registry import) holds a changed timeout's reconcile off, not the start. */
    @Test
    void aRegistrationUnderWayHoldsTheReconcileOffWithoutFailingTheStart() throws Exception {
        String s = sensor(null, "patient-door");
        java.util.Map<String, Integer> changed = new java.util.HashMap<>(profiles.heartbeatTimeouts());
        changed.put("patient-door", 5400);
        HeartbeatScan starting = new HeartbeatScan(jdbc, new org.springframework.transaction.support.TransactionTemplate(
                new org.springframework.jdbc.datasource.DataSourceTransactionManager(jdbc.getDataSource())),
                null, heartbeatProperties, new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), null, changed);
        try (java.sql.Connection importing = jdbc.getDataSource().getConnection()) {
            importing.setAutoCommit(false);
            // what a registration's trigger takes, held as a long import holds it
            importing.createStatement().execute("LOCK TABLE profile_heartbeat_timeouts IN ROW SHARE MODE");
            starting.reconcileTimeouts(); // gives up after its lock timeout, and does not throw
            assertThat(timeoutInState(s)).isEqualTo(60);
            importing.rollback();
        }
        try {
            starting.reconcileTimeouts(); // as the next scan does
            assertThat(timeoutInState(s)).isEqualTo(5400);
        } finally {
            heartbeat.reconcileTimeouts(); // as configured again
        }
        assertThat(timeoutInState(s)).isEqualTo(60);
    }

    @Test
    void scansRunningAtOnceDeclareEachSilenceOnce() throws Exception {
        // 2,000 sensors whose readings were measured long ago: all due at once
        List<String> sensors = new ArrayList<>();
        String prefix = "H" + UUID.randomUUID().toString().replace("-", "").substring(0, 6);
        jdbc.update("INSERT INTO sensors (id, address, heartbeat_timeout_seconds) "
                + "SELECT ? || lpad(g::text, 5, '0'), 'bulk', 3600 FROM generate_series(1, 2000) g", prefix);
        jdbc.update("""
                UPDATE sensor_state SET state = 1, sequence = 1, connectivity = 'online',
                       last_seen_at = now() - interval '2 hours', lost_deadline = now() - interval '1 hour'
                 WHERE sensor_id LIKE ?""", prefix + "%");

        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> scans = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                scans.add(pool.submit((Callable<Integer>) heartbeat::scan));
            }
            for (Future<Integer> f : scans) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }

        // the route's own scan may be running beside them: what it holds (skipped by the four) is its to declare
        await().atMost(Duration.ofSeconds(15)).until(() -> jdbc.queryForObject(
                "SELECT count(*) FROM sensor_state WHERE sensor_id LIKE ? AND connectivity = 'lost'",
                Integer.class, prefix + "%") == 2000);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensor_events WHERE sensor_id LIKE ? AND type = 'sensor.connection_lost'",
                Integer.class, prefix + "%")).isEqualTo(2000);
        assertThat(jdbc.queryForObject("SELECT count(DISTINCT sensor_id) FROM sensor_events WHERE sensor_id LIKE ?",
                Integer.class, prefix + "%")).isEqualTo(2000);
        assertThat(jdbc.queryForObject("SELECT count(*) FROM sensor_state WHERE sensor_id LIKE ? AND connectivity = 'lost' AND sequence = 2",
                Integer.class, prefix + "%")).isEqualTo(2000);
    }

    /** Completes after the next {@code n} heartbeat scans. */
    private NotifyBuilder scans(int n) {
        return new NotifyBuilder(camel).fromRoute("silent-sensors-are-declared-lost").whenCompleted(n).create();
    }

    private String sensor(Integer timeoutSeconds) {
        return sensor(timeoutSeconds, null);
    }

    private String sensor(Integer timeoutSeconds, String profile) {
        String id = "H" + UUID.randomUUID().toString().replace("-", "").substring(0, 15);
        jdbc.update("INSERT INTO sensors (id, address, heartbeat_timeout_seconds, profile, device_id) VALUES (?, 'room', ?, ?, ?)",
                id, timeoutSeconds, profile, profile == null ? null : "dev-" + id);
        return id;
    }

    private Integer timeoutInState(String sensor) {
        return jdbc.queryForObject("SELECT heartbeat_timeout_seconds FROM sensor_state WHERE sensor_id = ?", Integer.class,
                sensor);
    }

    private long deadlineAfterLastSeen(String sensor) {
        return jdbc.queryForObject("SELECT (extract(epoch FROM lost_deadline - last_seen_at) * 1000)::bigint "
                + "FROM sensor_state WHERE sensor_id = ?", Long.class, sensor);
    }

    private long deadlineSecondsAway(String sensor) {
        return jdbc.queryForObject("SELECT extract(epoch FROM lost_deadline - now())::bigint FROM sensor_state "
                + "WHERE sensor_id = ?", Long.class, sensor);
    }

    private void publish(String sensor, int data, long ts) {
        String body = "{\"sensor_id\":\"" + sensor + "\",\"data\":" + data + ",\"ts\":" + ts + "}";
        rabbit.send(ingest.exchange(), sensor, new Message(body.getBytes(StandardCharsets.UTF_8), new MessageProperties()));
    }

    private List<String> events(String sensor) {
        return jdbc.queryForList("SELECT sequence || ':' || type FROM sensor_events WHERE sensor_id = ? ORDER BY sequence",
                String.class, sensor);
    }

    private String connectivity(String sensor) {
        return jdbc.queryForObject("SELECT connectivity FROM sensor_state WHERE sensor_id = ?", String.class, sensor);
    }

    private long lostAtDeadline(String sensor) {
        return jdbc.queryForObject("""
                SELECT (extract(epoch FROM occurred_at) * 1000)::bigint FROM sensor_events
                 WHERE sensor_id = ? AND type = 'sensor.connection_lost' ORDER BY sequence DESC LIMIT 1""", Long.class, sensor);
    }
}
