package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import org.apache.camel.CamelContext;
import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * What a claim takes from the outbox for the lanes. The routes that claim are stopped, so only the test claims; each
 * test starts from an outbox with nothing due or in flight.
 */
@CamelSpringBootTest
@SpringBootTest(properties = "lockwatch.notify.poll-interval=600000")
class NotificationClaimTest {

    private static final Duration LEASE = Duration.ofSeconds(25);

    @Autowired NotificationStore store;
    @Autowired JdbcTemplate jdbc;
    @Autowired CamelContext camel;
    @Autowired TransactionTemplate tx;
    OutboxRows rows;

    @BeforeEach
    void onlyTheTestClaims() throws Exception {
        rows = new OutboxRows(jdbc);
        camel.getRouteController().stopRoute("due-notifications-are-claimed-on-a-timer");
        camel.getRouteController().stopRoute("due-notifications-are-claimed-when-recorded");
        jdbc.update("UPDATE notifications SET status = 'delivered', lease_until = NULL WHERE status IN ('pending', 'delivering')");
    }

    @Test
    void aNotificationWhoseLeaseRanOutIsClaimedAgainAsItsNextAttempt() {
        UUID client = newClient();
        String sensor = rows.sensor(client);
        UUID crashed = notification(client, sensor, 1, "delivering", 1, "now() - interval '1 second'");

        assertThat(store.claim(Map.of(client, room(10)), false, 10, 10, LEASE))
                .as("only a claim that looks everywhere takes lapsed leases back").isEmpty();
        List<Delivery> claimed = claimEverywhere(10);

        assertThat(claimed).extracting(Delivery::id, Delivery::attempt).containsExactly(tuple(crashed, 2));
        assertThat(jdbc.queryForObject("SELECT status FROM notifications WHERE id = ?", String.class, crashed))
                .isEqualTo("delivering");
        assertThat(jdbc.queryForObject("SELECT lease_until > now() + interval '20 seconds' FROM notifications WHERE id = ?",
                Boolean.class, crashed)).as("a new lease").isTrue();
    }

    @Test
    void aNotificationWaitsWhileAnOlderOneOfItsSensorIsStillBeingSentToItsClient() {
        UUID client = newClient();
        UUID otherClient = newClient();
        String sensor = rows.sensor(client, otherClient);
        UUID inFlight = notification(client, sensor, 1, "delivering", 1, "now() + interval '20 seconds'");
        UUID newer = notification(client, sensor, 2, "pending", 0, null);
        UUID toTheOther = notification(otherClient, sensor, 2, "pending", 0, null);

        assertThat(claimEverywhere(10)).extracting(Delivery::id)
                .as("only the other client's: this client still has the older event in flight")
                .containsExactly(toTheOther);

        jdbc.update("UPDATE notifications SET status = 'delivered', lease_until = NULL WHERE id = ?", inFlight);
        assertThat(store.claim(Map.of(client, room(10)), false, 10, 10, LEASE)).extracting(Delivery::id).containsExactly(newer);
    }

    @Test
    void anOlderOneWhoseLeaseRanOutIsSentAgainFirstAndTheNewerOneWaitsForIt() {
        UUID client = newClient();
        String sensor = rows.sensor(client);
        UUID crashed = notification(client, sensor, 1, "delivering", 1, "now() - interval '1 second'");
        UUID newer = notification(client, sensor, 2, "pending", 0, null);

        assertThat(claimEverywhere(10)).extracting(Delivery::id).containsExactly(crashed);
        jdbc.update("UPDATE notifications SET status = 'delivered', lease_until = NULL WHERE id = ?", crashed);
        assertThat(claimEverywhere(10)).extracting(Delivery::id).containsExactly(newer);
    }

    @Test
    void aPausedClientIsClaimedNothing() {
        UUID client = newClient();
        String sensor = rows.sensor(client);
        UUID waiting = notification(client, sensor, 1, "pending", 0, null);
        jdbc.update("UPDATE clients SET enabled = false WHERE id = ?", client);

        assertThat(claimEverywhere(10)).isEmpty();
        assertThat(store.claim(Map.of(client, room(10)), false, 10, 10, LEASE)).isEmpty();
        jdbc.update("UPDATE clients SET enabled = true WHERE id = ?", client);
        assertThat(claimEverywhere(10)).extracting(Delivery::id).containsExactly(waiting);
    }

    @Test
    void aLaneIsClaimedItsLongestDueFirstAndOneWithoutRoomNothing() {
        UUID client = newClient();
        UUID closed = newClient();
        String sensor = rows.sensor(client, closed);
        String other = rows.sensor(client);
        UUID later = rows.notification(client, sensor, 1, "pending", 0, null, "now() - interval '1 minute'");
        UUID earlier = rows.notification(client, other, 1, "pending", 0, null, "now() - interval '2 minutes'");
        rows.notification(closed, sensor, 1, "pending", 0, null, "now() - interval '3 minutes'");
        rows.notification(client, rows.sensor(client), 1, "pending", 0, null, "now() + interval '1 minute'");

        assertThat(store.claim(Map.of(closed, room(0)), true, 10, 10, LEASE)).extracting(Delivery::id)
                .containsExactly(earlier, later);
    }

    @Test
    void aLaneIsGivenAtMostItsRoomAndANewLaneTheRoomOfOne() {
        UUID client = newClient();
        UUID other = newClient();
        List<UUID> due = dueOfEachItsOwnSensor(client, 5, 0);
        List<UUID> others = dueOfEachItsOwnSensor(other, 5, 0);

        assertThat(store.claim(Map.of(client, room(2)), true, 3, 100, LEASE)).extracting(Delivery::id)
                .as("its two longest due, and the three longest due of the lane not met before")
                .containsExactlyInAnyOrder(due.get(0), due.get(1), others.get(0), others.get(1), others.get(2));
    }

    @Test
    void aClaimForTheGivenLanesTakesNothingOfOtherClients() {
        UUID client = newClient();
        UUID other = newClient();
        List<UUID> due = dueOfEachItsOwnSensor(client, 2, 0);
        dueOfEachItsOwnSensor(other, 2, 60);

        assertThat(store.claim(Map.of(client, room(10)), false, 10, 100, LEASE)).extracting(Delivery::id)
                .containsExactlyInAnyOrderElementsOf(due);
    }

    /**
     * Fewer request slots than the lanes have room for: the lanes take turns, each one's longest due first, so a
     * client with one notification is not kept behind another's backlog, however much longer that one has waited.
     */
    @Test
    void whereTheInstanceHasLessRoomThanTheLanesTheyTakeTurns() {
        UUID busy = newClient();
        UUID quiet = newClient();
        List<UUID> backlog = dueOfEachItsOwnSensor(busy, 100, 600);
        List<UUID> one = dueOfEachItsOwnSensor(quiet, 1, 0);

        assertThat(store.claim(Map.of(busy, room(64), quiet, room(64)), false, 4, 3, LEASE)).extracting(Delivery::id)
                .containsExactlyInAnyOrder(backlog.get(0), backlog.get(1), one.get(0));
    }

    /**
     * A replayed notification of a sensor goes behind the sensor's live ones, though its sequence is older: the live
     * one first, then the replayed one, never both in flight; and the live one's delivery names the queue as having
     * a successor, so the replayed one is not left for the poll.
     */
    @Test
    void aReplayedNotificationGoesBehindTheLiveHeadOfItsSensor() {
        UUID client = newClient();
        String sensor = rows.sensor(client);
        UUID replayed = rows.notification(client, sensor, 1, "pending", 0, null, "now() - interval '1 minute'");
        jdbc.update("UPDATE notifications SET replayed = true WHERE id = ?", replayed);
        UUID live = notification(client, sensor, 2, "pending", 0, null);

        List<Delivery> first = store.claim(Map.of(client, room(10)), false, 10, 10, LEASE);
        assertThat(first).extracting(Delivery::id).as("the live one only, though the replayed one is older")
                .containsExactly(live);
        assertThat(first.get(0).replayed()).isFalse();
        assertThat(store.claim(Map.of(client, room(10)), false, 10, 10, LEASE))
                .as("nothing while the live one is in flight").isEmpty();

        Set<UUID> successors = store.recordAttempts(List.of(new FinishedAttempt(delivery(live, client, sensor), 200, null,
                System.currentTimeMillis(), 5, NotificationStore.Outcome.DELIVERED, null)));
        assertThat(successors).as("the replayed one waits behind it").containsExactly(live);
        List<Delivery> then = store.claim(Map.of(client, room(10)), false, 10, 10, LEASE);
        assertThat(then).extracting(Delivery::id).containsExactly(replayed);
        assertThat(then.get(0).replayed()).as("it says it was asked for again").isTrue();

        UUID newer = notification(client, sensor, 3, "pending", 0, null);
        assertThat(store.claim(Map.of(client, room(10)), false, 10, 10, LEASE))
                .as("a live one that comes while the replayed one is in flight waits for it").isEmpty();
        jdbc.update("UPDATE notifications SET status = 'delivered', lease_until = NULL WHERE id = ?", replayed);
        assertThat(store.claim(Map.of(client, room(10)), false, 10, 10, LEASE)).extracting(Delivery::id)
                .containsExactly(newer);
    }

    /**
     * A lane with room for one takes its live work before its replayed work, however long that has been due; and where
     * the instance's slots are short, a lane with live work goes before one with only replayed work in the same turn.
     */
    @Test
    void liveWorkGoesBeforeReplayedWorkInALaneAndAcrossLanes() {
        UUID client = newClient();
        List<UUID> replayed = dueOfEachItsOwnSensor(client, 3, 600);
        replayed.forEach(id -> jdbc.update("UPDATE notifications SET replayed = true WHERE id = ?", id));
        List<UUID> live = dueOfEachItsOwnSensor(client, 1, 0);

        assertThat(store.claim(Map.of(client, room(1)), false, 10, 10, LEASE)).extracting(Delivery::id)
                .containsExactly(live.get(0));
        assertThat(store.claim(Map.of(client, room(2)), false, 10, 10, LEASE)).extracting(Delivery::id)
                .as("then the replayed ones, longest due first").containsExactly(replayed.get(0), replayed.get(1));

        UUID replaying = newClient();
        UUID quiet = newClient();
        dueOfEachItsOwnSensor(replaying, 5, 600)
                .forEach(id -> jdbc.update("UPDATE notifications SET replayed = true WHERE id = ?", id));
        List<UUID> one = dueOfEachItsOwnSensor(quiet, 1, 0);
        assertThat(store.claim(Map.of(replaying, room(4), quiet, room(4)), false, 4, 1, LEASE)).extracting(Delivery::id)
                .as("one free slot: the live event, not the replay that has waited longer").containsExactly(one.get(0));
    }

    /**
     * A group of attempts recorded together: each gets its attempt row and outcome; a client whose attempt failed is
     * failing from then, one whose attempt delivered no longer; and the group says which finished heads have a newer
     * notification of their queue waiting.
     */
    @Test
    void aRecordedGroupWritesEachOutcomeMarksFailingClientsAndNamesTheHeadsWithASuccessor() {
        UUID healthy = newClient();
        UUID failing = newClient();
        jdbc.update("UPDATE clients SET failing_since = now() - interval '1 minute' WHERE id = ?", healthy);
        String sensor = rows.sensor(healthy, failing);
        UUID followed = notification(healthy, sensor, 1, "delivering", 1, "now() + interval '20 seconds'");
        notification(healthy, sensor, 2, "pending", 0, null);
        UUID failed = notification(failing, sensor, 1, "delivering", 1, "now() + interval '20 seconds'");
        long now = System.currentTimeMillis();

        Set<UUID> successorsWaiting = store.recordAttempts(List.of(
                new FinishedAttempt(delivery(followed, healthy, sensor), 204, null, now, 5,
                        NotificationStore.Outcome.DELIVERED, null),
                new FinishedAttempt(delivery(failed, failing, sensor), null, "no answer", now, 5,
                        NotificationStore.Outcome.DEAD, null)));

        assertThat(successorsWaiting).containsExactly(followed);
        assertThat(jdbc.queryForObject("SELECT status FROM notifications WHERE id = ?", String.class, followed)).isEqualTo("delivered");
        assertThat(jdbc.queryForObject("SELECT status FROM notifications WHERE id = ?", String.class, failed)).isEqualTo("dead");
        assertThat(jdbc.queryForList("SELECT status_code FROM delivery_attempts WHERE notification_id IN (?, ?) ORDER BY status_code NULLS LAST",
                Integer.class, followed, failed)).containsExactly(204, null);
        assertThat(jdbc.queryForObject("SELECT failing_since IS NULL FROM clients WHERE id = ?", Boolean.class, healthy))
                .as("delivered: no longer failing").isTrue();
        assertThat(jdbc.queryForObject("SELECT failing_since IS NOT NULL FROM clients WHERE id = ?", Boolean.class, failing))
                .as("failed: failing from now").isTrue();
    }

    /**
     * A new install's first hour: the outbox's statistics say a client has next to nothing pending (they were taken
     * before its first states came), and it has thousands, each of a sensor of its own. A claim of a few looks each
     * candidate's queue up by its client and sensor, not by reading every pending notification of the client once per
     * candidate (issue 55: 10 ms and 1,500 buffers a claim of 8 with 5,000 pending; here 22,793 rows fetched). Counted
     * by the rows the claim's transaction fetched from the table, which PostgreSQL keeps per transaction.
     */
    @Test
    void aClaimReadsItsCandidatesQueuesAloneWhileTheStatisticsAreThoseOfAnEmptyOutbox() {
        UUID client = newClient();
        jdbc.execute("ANALYZE notifications");
        jdbc.update("""
                WITH s AS (INSERT INTO sensors (id, address)
                           SELECT 'F' || substr(md5(random()::text), 1, 15), 'Room' FROM generate_series(1, 2000)
                           RETURNING id),
                     l AS (INSERT INTO client_sensors (client_id, sensor_id) SELECT ?, id FROM s),
                     e AS (INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at)
                           SELECT id, 1, 'sensor.state_changed', 1, NULL, now() FROM s RETURNING id, sensor_id)
                INSERT INTO notifications (event_id, client_id, sensor_id, type, sequence, next_attempt_at)
                SELECT e.id, ?, e.sensor_id, 'sensor.state_changed', 1, now() - interval '1 second' FROM e""",
                client, client);

        long fetched = tx.execute(status -> {
            assertThat(store.claim(Map.of(client, room(8)), false, 8, 8, LEASE)).hasSize(8);
            Long rowsRead = jdbc.queryForObject("""
                    SELECT idx_tup_fetch + seq_tup_read FROM pg_stat_xact_user_tables WHERE relname = 'notifications'""",
                    Long.class);
            status.setRollbackOnly();
            return rowsRead;
        });

        // read queue by queue, a claim of 8 reads a few hundred rows at most (what else the table holds moves it:
        // 272 beside the whole suite's rows); by the client alone, each of the 2,000 once for every candidate
        assertThat(fetched).as("rows of the outbox read to claim 8 of 2,000 pending: fewer than one pass over them")
                .isLessThan(2000);
    }

    private static Lanes.Room room(int room) {
        return new Lanes.Room(room, 0);
    }

    private List<Delivery> claimEverywhere(int total) {
        return store.claim(Map.of(), true, 10, total, LEASE);
    }

    /**
     * One free slot, two lanes with due work: the one with nothing in flight goes first, though the other's has waited
     * longer. So a busy lane that holds every slot cannot take each one that frees while another client waits.
     */
    @Test
    void aFreeSlotGoesToTheLaneWithFewestInFlight() {
        UUID busy = newClient();
        UUID quiet = newClient();
        dueOfEachItsOwnSensor(busy, 10, 600);
        List<UUID> one = dueOfEachItsOwnSensor(quiet, 1, 0);

        assertThat(store.claim(Map.of(busy, new Lanes.Room(1, 7), quiet, room(8)), false, 8, 1, LEASE))
                .extracting(Delivery::id).containsExactly(one.get(0));
    }

    /**
     * {@code n} due notifications of the client, each of a sensor of its own, the first due longest: {@code ageSeconds}
     * plus n seconds ago, the last {@code ageSeconds} + 1.
     */
    private List<UUID> dueOfEachItsOwnSensor(UUID client, int n, int ageSeconds) {
        List<UUID> due = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            due.add(rows.notification(client, rows.sensor(client), 1, "pending", 0, null,
                    "now() - interval '" + (ageSeconds + n - i) + " seconds'"));
        }
        return due;
    }

    private static Delivery delivery(UUID id, UUID client, String sensor) {
        return new Delivery(id, client, "http://127.0.0.1:9/hook", "secret", null, true, sensor, "Room",
                "sensor.state_changed", 1, 0, 1, System.currentTimeMillis(), 1);
    }

    private UUID newClient() {
        return rows.client("http://127.0.0.1:9/hook");
    }

    private UUID notification(UUID client, String sensor, long sequence, String status, int attempts, String leaseUntil) {
        return rows.notification(client, sensor, sequence, status, attempts, leaseUntil, "now() - interval '1 second'");
    }

    /**
     * A queue behind a head that failed and waits for its retry collapses even while its client is not failing
     * (another of its queues succeeded since), and one of a healthy client's does not: the two sides of the test
     * that spares most batches the collapse statement.
     */
    @Test
    void aQueueCollapsesBehindAHeadWaitingForItsRetryAndNotBehindAHealthyOne() throws Exception {
        UUID client = rows.client("http://127.0.0.1:9/behind");
        String retrying = rows.sensor(client), healthy = rows.sensor(client);
        UUID head = rows.notification(client, retrying, 1, "pending", 1, null, "now() + interval '1 hour'");
        jdbc.update("UPDATE notifications SET last_error = 'HTTP 503' WHERE id = ?", head);
        rows.notification(client, healthy, 1, "pending", 0, null, "now() + interval '1 hour'");

        List<Long> events = List.of(event(retrying, 2), event(healthy, 2));
        try (var c = jdbc.getDataSource().getConnection()) {
            Outbox.notificationsFor(c, events, null);
        }

        assertThat(jdbc.queryForList("SELECT sequence, status, superseded_reason FROM notifications WHERE sensor_id = ? ORDER BY sequence",
                retrying)).extracting(r -> r.get("sequence") + ":" + r.get("status") + ":" + r.get("superseded_reason"))
                .containsExactly("1:superseded:retrying", "2:pending:null");
        assertThat(jdbc.queryForList("SELECT sequence, status FROM notifications WHERE sensor_id = ? ORDER BY sequence",
                healthy)).extracting(r -> r.get("sequence") + ":" + r.get("status"))
                .containsExactly("1:pending", "2:pending");
    }

    private long event(String sensor, long sequence) {
        return jdbc.queryForObject("""
                INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at)
                VALUES (?, ?, 'sensor.state_changed', 0, 1, now()) RETURNING id""", Long.class, sensor, sequence);
    }
}
