package io.lockwatch.ingest;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicReference;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer;
import org.springframework.amqp.rabbit.listener.DirectMessageListenerContainer;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Shares the partition queues of the readings out among the running instances, so that several instances
 * together consume faster than one while the readings of each sensor stay in order.
 *
 * <p>Sensors publish with their id as routing key; with {@code lockwatch.ingest.partitions} &gt; 1 a
 * consistent-hash exchange sends each sensor's readings always to the same of N partition queues, and each queue
 * is declared single-active-consumer: RabbitMQ lets one consumer at a time take from it, in order, and hands its
 * unacknowledged messages to the next one in order. That is the guarantee; this class only spreads the load: each
 * instance renews its row in {@code ingest_members}, reads the live members in the order they started, and
 * consumes the partitions {@code p} with {@code p mod members = its place}. When an instance joins or leaves (or
 * stops renewing for the member timeout), the others take up the new share at their next round. While two
 * instances disagree for a moment, both may consume one queue; single-active-consumer keeps that safe.
 */
public class IngestPartitions {

    private static final Logger log = LoggerFactory.getLogger(IngestPartitions.class);

    private final JdbcTemplate jdbc;
    private final IngestProperties props;
    private final String instanceId;
    private final AtomicReference<DirectMessageListenerContainer> container = new AtomicReference<>();
    private volatile Set<String> owned = Set.of();
    private final Runnable takingUp;

    /**
     * @param takingUp run before this instance starts consuming partitions another instance may have consumed
     *                 until now (their sensors' state held in memory is then out of date)
     */
    public IngestPartitions(JdbcTemplate jdbc, IngestProperties props, String instanceId, Runnable takingUp) {
        this.jdbc = jdbc;
        this.props = props;
        this.instanceId = instanceId;
        this.takingUp = takingUp;
    }

    public boolean enabled() {
        return props.partitions() > 1;
    }

    /** The queue of partition {@code p}. */
    public static String queueOf(IngestProperties props, int p) {
        return props.queue() + ".p" + p;
    }

    /** Every queue readings wait in: the one readings queue, or the N partition queues. */
    public static List<String> readingQueues(IngestProperties props) {
        if (props.partitions() <= 1) {
            return List.of(props.queue());
        }
        List<String> queues = new ArrayList<>();
        for (int p = 0; p < props.partitions(); p++) {
            queues.add(queueOf(props, p));
        }
        return queues;
    }

    /** The consistent-hash exchange between the readings exchange and the partition queues. */
    public static String hashExchangeOf(IngestProperties props) {
        return props.exchange() + ".partitions";
    }

    /**
     * The listener container of the readings consumer ({@link ReadingsComponent}), started without
     * queues: they are added and removed here.
     */
    void attach(AbstractMessageListenerContainer listener) {
        if (!(listener instanceof DirectMessageListenerContainer direct)) {
            throw new IllegalStateException("partitioned ingest needs the direct listener container, not " + listener.getClass());
        }
        listener.setQueueNames();
        owned = Set.of();
        container.set(direct);
    }

    /** Which partitions the instance at {@code place} of {@code members} consumes. */
    static Set<Integer> share(int partitions, int members, int place) {
        Set<Integer> share = new TreeSet<>();
        for (int p = place; p < partitions; p += members) {
            share.add(p);
        }
        return share;
    }

    /**
     * One round (the route {@code ingest-partitions-are-shared-out}, every {@code rebalance-interval}): renew this
     * instance's membership, compute its share from the live members, and consume exactly that.
     */
    public void rebalance() {
        renew();
        DirectMessageListenerContainer listener = container.get();
        if (!enabled() || listener == null) {
            return;
        }
        // the instances with this partition count (one with another refused to start beside them)
        List<String> members = jdbc.queryForList("""
                SELECT instance_id FROM ingest_members
                 WHERE seen_at > now() - make_interval(secs => ?) AND coalesce(partitions, ?) = ?
                 ORDER BY started_at, instance_id""", String.class, props.memberTimeout().toMillis() / 1000.0,
                props.partitions(), props.partitions());
        int place = members.indexOf(instanceId);
        if (place < 0) {
            return; // our own row is older than the timeout: a stalled round; the next one counts again
        }
        Set<String> wanted = new LinkedHashSet<>();
        for (int p : share(props.partitions(), members.size(), place)) {
            wanted.add(queueOf(props, p));
        }
        Set<String> current = owned;
        if (wanted.equals(current)) {
            return;
        }
        List<String> release = new ArrayList<>(current);
        release.removeAll(wanted);
        List<String> take = new ArrayList<>(wanted);
        take.removeAll(current);
        if (!release.isEmpty()) {
            listener.removeQueueNames(release.toArray(String[]::new));
        }
        if (!take.isEmpty()) {
            takingUp.run();
            listener.addQueueNames(take.toArray(String[]::new));
        }
        owned = Set.copyOf(wanted);
        log.info("Ingest partitions: instance {} is {} of {} and consumes {} (took {}, released {})",
                instanceId, place + 1, members.size(), new TreeSet<>(wanted), take, release);
    }

    /** This instance's row, renewed; every instance keeps one, so that the next to start sees it (V16). */
    void renew() {
        jdbc.update("""
                INSERT INTO ingest_members (instance_id, partitions) VALUES (?, ?)
                ON CONFLICT (instance_id) DO UPDATE SET seen_at = now(), partitions = excluded.partitions""",
                instanceId, props.partitions());
    }

    /** Another instance's row: its partition count (null: from before V16) and when it was last renewed. */
    private record Member(String id, Integer partitions, java.sql.Timestamp seenAt) {
    }

    private List<Member> others() {
        return jdbc.query("""
                SELECT instance_id, partitions, seen_at FROM ingest_members
                 WHERE instance_id <> ? AND seen_at > now() - make_interval(secs => ?)""",
                (rs, i) -> new Member(rs.getString(1), (Integer) rs.getObject(2), rs.getTimestamp(3)),
                instanceId, props.memberTimeout().toMillis() / 1000.0);
    }

    /**
     * At start, before a reading is consumed: refuses to run beside a live instance when either consumes the one
     * readings queue (two consumers of one queue apply a sensor's readings out of order), or when their partition
     * counts differ (each would hash sensors to other queues). A row that is not renewed within two rounds is an
     * instance that is gone (killed, not stopped) and does not count. Then joins.
     *
     * @throws AnotherInstanceException with the one line an operator needs
     */
    public void refuseIncompatibleInstances() {
        for (Member m : liveOthers()) {
            int theirs = m.partitions() == null ? 1 : m.partitions();
            if (theirs == 1 || props.partitions() == 1) {
                throw new AnotherInstanceException("Another lockwatch instance (" + m.id() + ") consumes the readings "
                        + "with lockwatch.ingest.partitions=" + theirs + ", this one with " + props.partitions()
                        + ": several instances need the same lockwatch.ingest.partitions > 1 (RabbitMQ), or one "
                        + "instance alone");
            }
            refuseAnotherCount(m, theirs);
        }
        renew();
    }

    /**
     * At the start of an instance without the pipeline, which consumes nothing and so never joins: it still declares
     * the readings' topology, and one declared for another partition count would bind queues nobody consumes (or
     * unbind the ones the others do). So it refuses to run beside a live instance with another count.
     *
     * @throws AnotherInstanceException with the one line an operator needs
     */
    public void refuseAnotherPartitionCount() {
        for (Member m : liveOthers()) {
            refuseAnotherCount(m, m.partitions() == null ? 1 : m.partitions());
        }
    }

    private void refuseAnotherCount(Member m, int theirs) {
        if (theirs != props.partitions()) {
            throw new AnotherInstanceException("Another lockwatch instance (" + m.id() + ") runs with "
                    + "lockwatch.ingest.partitions=" + theirs + ", this one with " + props.partitions()
                    + ": every instance needs the same count");
        }
    }

    /** The other instances whose rows are renewed while this one watches for two rounds (none: no wait). */
    private List<Member> liveOthers() {
        List<Member> before = others();
        if (before.isEmpty()) {
            return List.of();
        }
        try {
            // long enough for a live instance to renew its row twice
            Thread.sleep(props.rebalanceInterval().multipliedBy(2).plusSeconds(1).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while looking for other instances", e);
        }
        java.util.Map<String, java.sql.Timestamp> first = new java.util.HashMap<>();
        before.forEach(m -> first.put(m.id(), m.seenAt()));
        List<Member> live = new ArrayList<>();
        for (Member m : others()) {
            java.sql.Timestamp earlier = first.get(m.id());
            if (earlier == null || m.seenAt().after(earlier)) {
                live.add(m);
            }
        }
        return live;
    }

    /** The partition queues this instance consumes now. */
    public Set<String> owned() {
        return owned;
    }

    /**
     * Removes the binding {@code readings exchange --#--> destination} if the destination exists: probed first
     * with a passive declare on a channel of its own, since a broker closes the channel of an unbind that names
     * nothing. A destination that still holds messages is left for an operator to drain, with a warning.
     */
    static void unbindIfPresent(org.springframework.amqp.rabbit.core.RabbitTemplate rabbit, String destination,
                                boolean isExchange, String exchange) {
        try {
            rabbit.execute(channel -> {
                if (isExchange) {
                    channel.exchangeDeclarePassive(destination);
                    channel.exchangeUnbind(destination, exchange, "#");
                } else {
                    int waiting = channel.queueDeclarePassive(destination).getMessageCount();
                    channel.queueUnbind(destination, exchange, "#");
                    if (waiting > 0) {
                        log.warn("The readings queue {} of the unpartitioned layout still holds {} messages and is no "
                                + "longer consumed: move them to the exchange {} (e.g. with a shovel), then delete it",
                                destination, waiting, exchange);
                    }
                }
                log.info("Unbound {} from {}: the layout is now {}", destination, exchange,
                        isExchange ? "one queue" : "partitioned");
                return null;
            });
        } catch (RuntimeException e) {
            log.debug("Nothing to unbind for {} ({})", destination, e.toString());
        }
    }

    /** On a graceful stop the others need not wait out the member timeout. */
    public void leave() {
        jdbc.update("DELETE FROM ingest_members WHERE instance_id = ?", instanceId);
    }
}
