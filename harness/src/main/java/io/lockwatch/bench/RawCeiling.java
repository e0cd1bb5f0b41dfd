package io.lockwatch.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;

/**
 * What RabbitMQ alone does with the service's traffic on this machine: the same readings published the same
 * way ({@link Publisher}: persistent, confirms, 1000 outstanding by default) to a temporary durable topic exchange bound
 * with {@code #} to a temporary durable queue, and a plain consumer (prefetch {@value #PREFETCH}) that only
 * acknowledges, with one multiple-ack every {@value #ACK_EVERY} messages, as the service does per batch. The
 * exchange and queue are deleted afterwards (and before, in case an earlier run was killed). At a given rate, its
 * latency too ({@link #latency}).
 */
final class RawCeiling {

    static final String EXCHANGE = "lockwatch.bench.ceiling";
    static final String QUEUE = "lockwatch.bench.ceiling";
    static final int PREFETCH = 2000;
    static final int ACK_EVERY = 1000;

    /**
     * @param consumedPerSecond  median consumed msg/s in steady state
     * @param publishedPerSecond median published msg/s in steady state
     */
    record Result(double consumedPerSecond, double publishedPerSecond, long published, long consumed,
                  Map<String, Double> meanCpu, List<Sampler.Sample> samples, double publishEnd) {
    }

    private final ConnectionFactory factory;
    private final Broker broker;
    private final CpuSampler cpu;
    private final String queueType;

    RawCeiling(ConnectionFactory factory, Broker broker, CpuSampler cpu, String queueType) {
        this.queueType = queueType;
        this.factory = factory;
        this.broker = broker;
        this.cpu = cpu;
    }

    Result run(ReadingSource source, Duration duration, double warmupSeconds, int confirmWindow) throws Exception {
        Carried run = carry(EXCHANGE, QUEUE, "ceiling", source, duration, 0, confirmWindow, ACK_EVERY, body -> { }, false);
        List<Sampler.Sample> samples = run.samples();
        double consumedRate = Stats.median(Stats.rates(samples, Sampler.Sample::consumed, warmupSeconds, run.publishEnd()));
        double publishedRate = Stats.median(Stats.rates(samples, Sampler.Sample::published, warmupSeconds, run.publishEnd()));
        return new Result(consumedRate, publishedRate, run.published(), run.consumed(),
                Stats.meanCpu(samples, warmupSeconds, run.publishEnd()), samples, run.publishEnd());
    }

    static final String LATENCY_EXCHANGE = "lockwatch.bench.latency";
    static final String LATENCY_QUEUE = "lockwatch.bench.latency";
    /** As the service's batches are acknowledged: one multiple-ack for a few readings at this rate. */
    static final int LATENCY_ACK_EVERY = 20;

    /** @param latenciesMs publish to consume of each reading after the warm-up, sorted */
    record Latency(long[] latenciesMs, double rate, Map<String, Double> meanCpu) {
        double quantile(double q) {
            return NotificationCheck.quantile(latenciesMs, q);
        }
    }

    /**
     * The latency yardstick of a paced run: RabbitMQ alone carrying the same readings at the same rate, published the
     * same way ({@link Publisher}) to a temporary queue of the same type, taken by a plain consumer that only
     * acknowledges. Each reading's latency is its consumer's clock minus the time it carries ({@code ts}, set as it is
     * published), the start of the service's own event-to-POST latency; so the broker's p99 on this machine, at this
     * load, is what the service's is to be read against. The exchange and queue are deleted afterwards (and before, in
     * case an earlier run was killed).
     */
    Latency latency(ReadingSource source, Duration duration, double ratePerSecond, double warmupSeconds, int confirmWindow)
            throws Exception {
        long measureFrom = System.currentTimeMillis() + (long) (warmupSeconds * 1000);
        long[] latencies = new long[(int) Math.min(Integer.MAX_VALUE - 8, (long) (ratePerSecond * duration.toSeconds() + 1024))];
        java.util.concurrent.atomic.AtomicInteger kept = new java.util.concurrent.atomic.AtomicInteger();
        Carried run = carry(LATENCY_EXCHANGE, LATENCY_QUEUE, "latency", source, duration, ratePerSecond, confirmWindow,
                LATENCY_ACK_EVERY, body -> {
                    long now = System.currentTimeMillis();
                    long ts = ts(body);
                    // one consumer thread per channel: the only writer; the count is published after the entry
                    int n = kept.get();
                    if (ts >= measureFrom && n < latencies.length) {
                        latencies[n] = now - ts;
                        kept.set(n + 1);
                    }
                }, true);
        long[] sorted = Arrays.copyOf(latencies, kept.get());
        Arrays.sort(sorted);
        return new Latency(sorted, ratePerSecond, Stats.meanCpu(run.samples(), warmupSeconds, run.publishEnd()));
    }

    /** What {@link #carry} measured: the samples, when publishing ended (s), and the counts. */
    private record Carried(List<Sampler.Sample> samples, double publishEnd, long published, long consumed) {
    }

    /**
     * Publishes {@code source}'s readings for {@code duration} at {@code ratePerSecond} (0: as fast as the broker
     * takes them) to a temporary exchange bound to a temporary queue, declared anew and deleted afterwards, consumed
     * by a plain consumer that hands each body to {@code seen} and acknowledges every {@code ackEvery}th;
     * {@code drain}: waits (up to 30 s) until what was published is consumed.
     */
    private Carried carry(String exchange, String queue, String name, ReadingSource source, Duration duration,
                          double ratePerSecond, int confirmWindow, int ackEvery,
                          java.util.function.Consumer<byte[]> seen, boolean drain) throws Exception {
        broker.deleteTopology(exchange, queue);
        broker.declareTopology(exchange, queue, queueType);
        AtomicLong consumed = new AtomicLong();
        try (Connection connection = factory.newConnection("lockwatch-bench-" + name + "-consumer");
             Publisher publisher = new Publisher(factory, exchange, "lockwatch-bench-" + name + "-publisher", confirmWindow)) {
            Channel channel = connection.createChannel();
            channel.basicQos(PREFETCH);
            channel.basicConsume(queue, false, new DefaultConsumer(channel) {
                @Override
                public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties,
                                           byte[] body) throws IOException {
                    seen.accept(body);
                    if (consumed.incrementAndGet() % ackEvery == 0) {
                        channel.basicAck(envelope.getDeliveryTag(), true);
                    }
                }
            });
            Sampler sampler = new Sampler(() -> new Sampler.Observation(consumed.get(), Double.NaN),
                    publisher::published, () -> broker.depth(queue), cpu).start();
            double publishEnd;
            try {
                publisher.publishFor(source::next, duration, ratePerSecond);
                publishEnd = sampler.elapsedSeconds();
                publisher.awaitConfirms();
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (drain && consumed.get() < publisher.published() && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
            } finally {
                sampler.close();
            }
            channel.close();
            return new Carried(sampler.samples(), publishEnd, publisher.published(), consumed.get());
        } finally {
            broker.deleteTopology(exchange, queue);
        }
    }

    /** The {@code ts} a reading carries ({@link ReadingSource#message}). */
    static long ts(byte[] body) {
        String json = new String(body, StandardCharsets.US_ASCII);
        int at = json.indexOf("\"ts\":");
        if (at < 0) {
            return Long.MIN_VALUE;
        }
        int from = at + 5, to = from;
        while (to < json.length() && Character.isDigit(json.charAt(to))) {
            to++;
        }
        return Long.parseLong(json, from, to, 10);
    }
}
