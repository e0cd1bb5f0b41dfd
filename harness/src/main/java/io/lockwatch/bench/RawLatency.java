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
 * The latency yardstick of a paced run: RabbitMQ alone carrying the same readings at the same rate, published the same
 * way ({@link Publisher}) to a temporary queue of the same type, taken by a plain consumer that only acknowledges. Each
 * reading's latency is its consumer's clock minus the time it carries ({@code ts}, set as it is published), the start
 * of the service's own event-to-POST latency; so the broker's p99 on this machine, at this load, is what the service's
 * is to be read against. The exchange and queue are deleted afterwards (and before, in case an earlier run was
 * killed).
 */
final class RawLatency {

    static final String EXCHANGE = "lockwatch.bench.latency";
    static final String QUEUE = "lockwatch.bench.latency";
    /** As the service's batches are acknowledged: one multiple-ack for a few readings at this rate. */
    static final int ACK_EVERY = 20;

    /** @param latenciesMs publish to consume of each reading after the warm-up, sorted */
    record Result(long[] latenciesMs, double rate, Map<String, Double> meanCpu) {
        double quantile(double q) {
            return NotificationCheck.quantile(latenciesMs, q);
        }
    }

    private final ConnectionFactory factory;
    private final Broker broker;
    private final CpuSampler cpu;
    private final String queueType;

    RawLatency(ConnectionFactory factory, Broker broker, CpuSampler cpu, String queueType) {
        this.factory = factory;
        this.broker = broker;
        this.cpu = cpu;
        this.queueType = queueType;
    }

    Result run(ReadingSource source, Duration duration, double ratePerSecond, double warmupSeconds, int confirmWindow)
            throws Exception {
        broker.deleteTopology(EXCHANGE, QUEUE);
        broker.declareTopology(EXCHANGE, QUEUE, queueType);
        long measureFrom = System.currentTimeMillis() + (long) (warmupSeconds * 1000);
        long[] latencies = new long[(int) Math.min(Integer.MAX_VALUE - 8, (long) (ratePerSecond * duration.toSeconds() + 1024))];
        AtomicLong consumed = new AtomicLong();
        java.util.concurrent.atomic.AtomicInteger kept = new java.util.concurrent.atomic.AtomicInteger();
        try (Connection connection = factory.newConnection("lockwatch-bench-latency-consumer");
             Publisher publisher = new Publisher(factory, EXCHANGE, "lockwatch-bench-latency-publisher", confirmWindow)) {
            Channel channel = connection.createChannel();
            channel.basicQos(RawCeiling.PREFETCH);
            channel.basicConsume(QUEUE, false, new DefaultConsumer(channel) {
                @Override
                public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties,
                                           byte[] body) throws IOException {
                    long now = System.currentTimeMillis();
                    long ts = ts(body);
                    // one consumer thread per channel: the only writer; the count is published after the entry
                    int n = kept.get();
                    if (ts >= measureFrom && n < latencies.length) {
                        latencies[n] = now - ts;
                        kept.set(n + 1);
                    }
                    if (consumed.incrementAndGet() % ACK_EVERY == 0) {
                        channel.basicAck(envelope.getDeliveryTag(), true);
                    }
                }
            });
            Sampler sampler = new Sampler(() -> new Sampler.Observation(consumed.get(), Double.NaN),
                    publisher::published, () -> broker.depth(QUEUE), cpu).start();
            double publishEnd;
            try {
                publisher.publishFor(source::next, duration, ratePerSecond);
                publishEnd = sampler.elapsedSeconds();
                publisher.awaitConfirms();
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (consumed.get() < publisher.published() && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
            } finally {
                sampler.close();
            }
            channel.close();
            long[] sorted = Arrays.copyOf(latencies, kept.get());
            Arrays.sort(sorted);
            List<Sampler.Sample> samples = sampler.samples();
            return new Result(sorted, ratePerSecond, Stats.meanCpu(samples, warmupSeconds, publishEnd));
        } finally {
            broker.deleteTopology(EXCHANGE, QUEUE);
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
