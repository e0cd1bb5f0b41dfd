package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.UUID;

import org.apache.camel.test.spring.junit5.CamelSpringBootTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.test.annotation.DirtiesContext;

/**
 * Delivery lanes against a real HTTP receiver that answers each request after a delay, as an endpoint across the
 * internet does. Every lane's bound is fixed at 8 here (the adaptive bound has LanesTest and LaneLimitTest), and so
 * are the instance's request slots: one busy lane can fill them all. The poll is ten minutes, so only the claims the
 * lanes start themselves deliver in time. Backlogs are written straight into the outbox, and the claim woken as
 * ingest wakes it.
 */
@CamelSpringBootTest
@SpringBootTest(properties = {
        "lockwatch.notify.max-concurrent=8",
        "lockwatch.notify.lane.min-concurrency=8",
        "lockwatch.notify.lane.initial-concurrency=8",
        "lockwatch.notify.lane.max-concurrency=8",
        "lockwatch.notify.poll-interval=600000",
        "lockwatch.notify.timeout=3s",
        "lockwatch.notify.connect-timeout=1s"})
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class DeliveryLanesTest {

    static final int LANE = 8;

    @org.junit.jupiter.api.extension.RegisterExtension
    static final WebhookReceiver receiver = WebhookReceiver.forTheClass();

    @Autowired JdbcTemplate jdbc;
    @Autowired ClaimWakeUp wakeUps;
    @Autowired TestPing ping;

    /**
     * One client with 120 due notifications and an endpoint that answers in 300 ms: its lane never has more than its
     * bound in flight, and keeps it full: finished requests are followed by the next at once (the poll is ten
     * minutes, so only the lane's own claims deliver all 120 in time). An answer long beside a refill keeps that
     * true on a machine as busy as two test JVMs make it. Requests answered together are recorded
     * together and refilled by one claim, whose requests arrive one after the other, so an arrival may find part of
     * the lane still on its way; how long the gap is, is the benchmark's to measure, not a test's.
     */
    @Test
    void aLaneKeepsItsBoundInFlightAndNeverMore() {
        String path = "/lane-" + UUID.randomUUID();
        receiver.delay(path, 300);
        UUID client = new OutboxRows(jdbc).client(receiver.url(path));
        backlog(client, 120);

        wakeUps.wakeUp();

        await().atMost(Duration.ofSeconds(60)).until(() -> receiver.at(path).size() == 120);
        List<Integer> inFlight = receiver.inFlightAtArrival(path);
        assertThat(inFlight).as("never more than the lane's bound").allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(LANE));
        List<Integer> steady = inFlight.subList(inFlight.size() / 2, inFlight.size() - LANE);
        assertThat(steady).as("in the second half the lane is filled to its bound again and again").contains(LANE);
        assertThat(steady.stream().filter(n -> n >= LANE - 1).count())
                .as("of the second half's requests, those that arrive with the lane full or one short: %s", steady)
                .isGreaterThanOrEqualTo(steady.size() / 4L);
        assertThat(receiver.at(path)).extracting(r -> r.header("webhook-id")).doesNotHaveDuplicates();
    }

    /**
     * A client with 10,000 waiting fills every request slot of the instance; another client's one notification is
     * still sent as soon as one slot is free, not behind the backlog: the lanes take turns by what each has in flight.
     */
    @Test
    void aClientWithOneWaitingIsNotKeptBehindAnothersBacklog() {
        String busyPath = "/busy-" + UUID.randomUUID();
        String quietPath = "/quiet-" + UUID.randomUUID();
        receiver.delay(busyPath, 20);
        OutboxRows rows = new OutboxRows(jdbc);
        UUID busy = rows.client(receiver.url(busyPath));
        UUID quiet = rows.client(receiver.url(quietPath));
        backlog(busy, 10_000);
        wakeUps.wakeUp();
        await().atMost(Duration.ofSeconds(30)).until(() -> receiver.at(busyPath).size() >= 50);

        rows.due(quiet, rows.sensor(quiet), 1);
        int busyBefore = receiver.at(busyPath).size();
        wakeUps.wakeUp();

        await().atMost(Duration.ofSeconds(30)).until(() -> receiver.at(quietPath).size() == 1);
        long quietArrived = receiver.at(quietPath).get(0).arrivedAt();
        long busyMeanwhile = receiver.at(busyPath).stream().skip(busyBefore).filter(r -> r.arrivedAt() < quietArrived).count();
        assertThat(busyMeanwhile).as("the busy client's requests before the quiet one's: one round of its lane at most")
                .isLessThanOrEqualTo(2 * LANE);
        assertThat(receiver.at(busyPath).size()).as("the backlog was still draining").isLessThan(10_000);
    }

    /**
     * A burst of test pings to an endpoint that hangs: a few are in flight at once, each in its client's lane, the
     * rest answered at once that they were not sent; another client's notification is delivered meanwhile.
     */
    @Test
    void testPingsToAHangingEndpointTakeNothingFromOtherClients() throws Exception {
        String hangingPath = "/hanging-" + UUID.randomUUID();
        String otherPath = "/other-" + UUID.randomUUID();
        receiver.answer(hangingPath, WebhookReceiver.HANG);
        OutboxRows rows = new OutboxRows(jdbc);
        UUID hanging = rows.client(receiver.url(hangingPath));
        UUID other = rows.client(receiver.url(otherPath));

        List<java.util.concurrent.CompletableFuture<TestPing.Result>> pings = new java.util.ArrayList<>();
        java.util.Queue<Long> answeredAt = new java.util.concurrent.ConcurrentLinkedQueue<>();
        for (int i = 0; i < TestPing.AT_ONCE + 4; i++) {
            pings.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                TestPing.Result r = ping.send(hanging);
                if (r.error().contains("timed out")) {
                    answeredAt.add(System.currentTimeMillis());
                }
                return r;
            }));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> receiver.at(hangingPath).size() == TestPing.AT_ONCE);
        rows.due(other, rows.sensor(other), 1);
        wakeUps.wakeUp();

        await().atMost(Duration.ofSeconds(30)).until(() -> receiver.at(otherPath).size() == 1);
        List<TestPing.Result> all = pings.stream().map(java.util.concurrent.CompletableFuture::join).toList();
        assertThat(all.stream().filter(r -> r.error().contains("timed out"))).hasSize(TestPing.AT_ONCE);
        assertThat(all.stream().filter(r -> r.error().startsWith("not sent: " + TestPing.AT_ONCE + " test pings are in flight")))
                .hasSize(4);
        assertThat(receiver.at(hangingPath)).hasSize(TestPing.AT_ONCE);
        assertThat(receiver.at(otherPath).get(0).arrivedAt()).as("the other client was sent its notification while they hung")
                .isLessThan(java.util.Collections.min(answeredAt));
    }

    /** {@code n} due notifications of the client, each of a sensor of its own linked to it, all due a minute ago. */
    private void backlog(UUID client, int n) {
        String prefix = "L" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        jdbc.update("""
                WITH s AS (INSERT INTO sensors (id, address) SELECT ? || i, 'Room' FROM generate_series(1, ?) AS i RETURNING id),
                     l AS (INSERT INTO client_sensors (client_id, sensor_id) SELECT ?, id FROM s RETURNING sensor_id),
                     e AS (INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at)
                           SELECT sensor_id, 1, 'sensor.state_changed', 1, 0, now() FROM l RETURNING id, sensor_id)
                INSERT INTO notifications (event_id, client_id, sensor_id, type, sequence, status, next_attempt_at)
                SELECT e.id, ?, e.sensor_id, 'sensor.state_changed', 1, 'pending', now() - interval '1 minute' FROM e""",
                prefix, n, client, client);
    }
}
