package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.util.unit.DataSize;

/**
 * The share-out of partition queues among instances, against the embedded PostgreSQL. The listener containers
 * are real but not started: what is checked is which queues each instance would consume.
 */
@SpringBootTest
class IngestPartitionsTest {

    @Autowired JdbcTemplate jdbc;
    @Autowired ConnectionFactory connections;
    @Autowired IngestProperties defaults;

    IngestProperties props;

    @Autowired org.apache.camel.CamelContext camel;

    @BeforeEach
    void fourPartitions() throws Exception {
        // this context's own instance renews its row too: out of the way, so that only the test's instances count
        camel.getRouteController().stopRoute("ingest-partitions-are-shared-out");
        jdbc.update("DELETE FROM ingest_members");
        props = partitions(4);
    }

    @org.junit.jupiter.api.AfterEach
    void renewingAgain() throws Exception {
        jdbc.update("DELETE FROM ingest_members");
        camel.getRouteController().startRoute("ingest-partitions-are-shared-out");
    }

    private IngestProperties partitions(int n) {
        return new IngestProperties(defaults.exchange(), defaults.queue(), defaults.invalidQueue(), 1, 2000, 1000,
                Duration.ofMillis(50), Duration.ofMillis(200), n, Duration.ofMillis(300), Duration.ofSeconds(15),
                DataSize.ofKilobytes(4), DataSize.ofKilobytes(128), Duration.ofMinutes(5), DataSize.ofMegabytes(1), 1000);
    }

    /** Another instance that renews its row every round, as a live one does, while {@code during} runs. */
    private void whileAlive(IngestPartitions other, Runnable during) {
        var renewing = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try {
            other.renew();
            renewing.scheduleAtFixedRate(other::renew, 100, 100, java.util.concurrent.TimeUnit.MILLISECONDS);
            during.run();
        } finally {
            renewing.shutdownNow();
        }
    }

    @Test
    void anInstanceRefusesToStartBesideALiveOneOnTheOneQueue() {
        IngestPartitions running = new IngestPartitions(jdbc, partitions(1), "running", () -> { });

        whileAlive(running, () -> org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> new IngestPartitions(jdbc, partitions(1), "second", () -> { }).refuseIncompatibleInstances())
                .isInstanceOf(AnotherInstanceException.class)
                .hasMessageContaining("running").hasMessageContaining("lockwatch.ingest.partitions=1"));
        assertThat(jdbc.queryForList("SELECT instance_id FROM ingest_members", String.class)).containsExactly("running");
    }

    @Test
    void anInstanceRefusesAnotherPartitionCountAndJoinsTheSame() {
        IngestPartitions four = new IngestPartitions(jdbc, partitions(4), "four", () -> { });

        whileAlive(four, () -> {
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> new IngestPartitions(jdbc, partitions(8), "eight", () -> { }).refuseIncompatibleInstances())
                    .isInstanceOf(AnotherInstanceException.class).hasMessageContaining("=4, this one with 8");
            new IngestPartitions(jdbc, partitions(4), "another-four", () -> { }).refuseIncompatibleInstances();
        });
        assertThat(jdbc.queryForList("SELECT instance_id FROM ingest_members ORDER BY 1", String.class))
                .containsExactly("another-four", "four");
    }

    /**
     * An instance without the pipeline consumes nothing: beside the one instance on the one queue it starts, and
     * never joins (it would be counted a member, given partitions it does not consume). Another count is refused.
     */
    @Test
    void anInstanceWithoutThePipelineStartsBesideAnyWithTheSameCountAndNeverJoins() {
        IngestPartitions running = new IngestPartitions(jdbc, partitions(1), "running", () -> { });

        whileAlive(running, () -> {
            new IngestPartitions(jdbc, partitions(1), "api-only", () -> { }).refuseAnotherPartitionCount();
            org.assertj.core.api.Assertions.assertThatThrownBy(
                            () -> new IngestPartitions(jdbc, partitions(4), "api-four", () -> { }).refuseAnotherPartitionCount())
                    .isInstanceOf(AnotherInstanceException.class).hasMessageContaining("=1, this one with 4");
        });
        assertThat(jdbc.queryForList("SELECT instance_id FROM ingest_members", String.class)).containsExactly("running");
    }

    @Test
    void theRowOfAKilledInstanceDoesNotKeepTheNextFromStarting() {
        // renewed a moment ago, then never again: what kill -9 leaves behind
        new IngestPartitions(jdbc, partitions(1), "killed", () -> { }).renew();

        new IngestPartitions(jdbc, partitions(1), "restarted", () -> { }).refuseIncompatibleInstances();

        assertThat(jdbc.queryForList("SELECT instance_id FROM ingest_members ORDER BY 1", String.class))
                .containsExactly("killed", "restarted");
    }

    @Test
    void everyPartitionHasExactlyOneOwnerWhateverTheNumberOfMembers() {
        for (int partitions = 1; partitions <= 16; partitions++) {
            for (int members = 1; members <= 20; members++) {
                int[] owners = new int[partitions];
                for (int place = 0; place < members; place++) {
                    Set<Integer> share = IngestPartitions.share(partitions, members, place);
                    // even: no member has more than one partition above another
                    assertThat(share.size()).isBetween(partitions / members, partitions / members + 1);
                    share.forEach(p -> owners[p]++);
                }
                assertThat(owners).as("%d partitions, %d members", partitions, members).containsOnly(1);
            }
        }
    }

    @Test
    void twoInstancesShareThePartitionsAndTheSurvivorTakesThemAllBack() {
        IngestPartitions a = new IngestPartitions(jdbc, props, "instance-a", () -> { });
        IngestPartitions b = new IngestPartitions(jdbc, props, "instance-b", () -> { });
        DirectMessageListenerContainer aListener = new DirectMessageListenerContainer(connections);
        DirectMessageListenerContainer bListener = new DirectMessageListenerContainer(connections);
        a.attach(aListener);
        b.attach(bListener);
        Set<String> all = Set.of(queue(0), queue(1), queue(2), queue(3));

        a.rebalance();
        assertThat(a.owned()).isEqualTo(all);
        assertThat(Set.of(aListener.getQueueNames())).isEqualTo(all);

        b.rebalance(); // b joins: second by start
        a.rebalance(); // a gives up b's share
        assertThat(a.owned()).containsExactlyInAnyOrder(queue(0), queue(2));
        assertThat(b.owned()).containsExactlyInAnyOrder(queue(1), queue(3));
        assertThat(Set.of(aListener.getQueueNames())).isEqualTo(a.owned());
        assertThat(Set.of(bListener.getQueueNames())).isEqualTo(b.owned());

        // b stops renewing (a crash): once it is older than the member timeout, a takes its partitions back
        jdbc.update("UPDATE ingest_members SET seen_at = now() - interval '1 minute' WHERE instance_id = 'instance-b'");
        a.rebalance();
        assertThat(a.owned()).isEqualTo(all);

        // b comes back; this time a leaves gracefully, and b has everything at its next round
        b.rebalance();
        a.rebalance();
        Set<String> union = new HashSet<>(a.owned());
        union.addAll(b.owned());
        assertThat(union).isEqualTo(all);
        assertThat(a.owned()).doesNotContainAnyElementsOf(b.owned());
        a.leave();
        b.rebalance();
        assertThat(b.owned()).isEqualTo(all);
        assertThat(jdbc.queryForList("SELECT instance_id FROM ingest_members", String.class)).isEqualTo(List.of("instance-b"));
    }

    private String queue(int p) {
        return IngestPartitions.queueOf(props, p);
    }
}
