package io.lockwatch.bench;

import java.io.IOException;
import java.time.Duration;
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
 * exchange and queue are deleted afterwards (and before, in case an earlier run was killed).
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
        broker.deleteTopology(EXCHANGE, QUEUE);
        broker.declareTopology(EXCHANGE, QUEUE, queueType);
        AtomicLong consumed = new AtomicLong();
        try (Connection connection = factory.newConnection("lockwatch-bench-ceiling-consumer");
             Publisher publisher = new Publisher(factory, EXCHANGE, "lockwatch-bench-ceiling-publisher", confirmWindow)) {
            Channel channel = connection.createChannel();
            channel.basicQos(PREFETCH);
            channel.basicConsume(QUEUE, false, new DefaultConsumer(channel) {
                @Override
                public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties,
                                           byte[] body) throws IOException {
                    if (consumed.incrementAndGet() % ACK_EVERY == 0) {
                        channel.basicAck(envelope.getDeliveryTag(), true);
                    }
                }
            });
            Sampler sampler = new Sampler(() -> new Sampler.Observation(consumed.get(), Double.NaN),
                    publisher::published, () -> broker.depth(QUEUE), cpu).start();
            double publishEnd;
            try {
                publisher.publishFor(source::next, duration, 0);
                publishEnd = sampler.elapsedSeconds();
                publisher.awaitConfirms();
            } finally {
                sampler.close();
            }
            List<Sampler.Sample> samples = sampler.samples();
            double consumedRate = Stats.median(Stats.rates(samples, Sampler.Sample::consumed, warmupSeconds, publishEnd));
            double publishedRate = Stats.median(Stats.rates(samples, Sampler.Sample::published, warmupSeconds, publishEnd));
            return new Result(consumedRate, publishedRate, publisher.published(), consumed.get(),
                    Stats.meanCpu(samples, warmupSeconds, publishEnd), samples, publishEnd);
        } finally {
            broker.deleteTopology(EXCHANGE, QUEUE);
        }
    }
}
