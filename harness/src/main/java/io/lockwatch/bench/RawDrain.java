package io.lockwatch.bench;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;

/**
 * The drain ceiling: how fast RabbitMQ alone hands over a backlog on this machine. A backlog of the same size
 * and shape as the service's is published (persistent, confirms) to a temporary durable queue with nobody
 * consuming; then a plain consumer (prefetch {@value RawCeiling#PREFETCH}, one multiple-ack every
 * {@value RawCeiling#ACK_EVERY} messages, as the service acks per batch) takes it, doing nothing else. The exchange
 * and queue are deleted afterwards (and before, in case an earlier run was killed).
 */
final class RawDrain {

    /**
     * @param perSecond     messages drained per second, from the consumer's start to the last ack
     * @param drainSeconds  that time
     * @param meanCpu       cores per process group while draining
     */
    record Result(long messages, double fillSeconds, double drainSeconds, double perSecond,
                  Map<String, Double> meanCpu, List<Sampler.Sample> samples) {
    }

    private final ConnectionFactory factory;
    private final Broker broker;
    private final CpuSampler cpu;
    private final String queueType;

    RawDrain(ConnectionFactory factory, Broker broker, CpuSampler cpu, String queueType) {
        this.queueType = queueType;
        this.factory = factory;
        this.broker = broker;
        this.cpu = cpu;
    }

    Result run(ReadingSource source, long messages, int confirmWindow) throws Exception {
        broker.deleteTopology(RawCeiling.EXCHANGE, RawCeiling.QUEUE);
        broker.declareTopology(RawCeiling.EXCHANGE, RawCeiling.QUEUE, queueType);
        try {
            long t0 = System.nanoTime();
            try (Publisher publisher = new Publisher(factory, RawCeiling.EXCHANGE, "lockwatch-bench-drain-publisher",
                    confirmWindow)) {
                for (long i = 0; i < messages; i++) {
                    publisher.publish(source.next());
                }
                publisher.awaitConfirms();
            }
            double fill = (System.nanoTime() - t0) / 1e9;
            AtomicLong consumed = new AtomicLong();
            CountDownLatch done = new CountDownLatch(1);
            try (Connection connection = factory.newConnection("lockwatch-bench-drain-consumer")) {
                Channel channel = connection.createChannel();
                channel.basicQos(RawCeiling.PREFETCH);
                Sampler sampler = new Sampler(() -> new Sampler.Observation(consumed.get(), Double.NaN),
                        () -> messages, () -> broker.depth(RawCeiling.QUEUE), cpu).start();
                long start = System.nanoTime();
                channel.basicConsume(RawCeiling.QUEUE, false, new DefaultConsumer(channel) {
                    @Override
                    public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties,
                                               byte[] body) throws IOException {
                        long n = consumed.incrementAndGet();
                        if (n % RawCeiling.ACK_EVERY == 0 || n == messages) {
                            channel.basicAck(envelope.getDeliveryTag(), true);
                        }
                        if (n == messages) {
                            done.countDown();
                        }
                    }
                });
                if (!done.await(30, TimeUnit.MINUTES)) {
                    throw new IllegalStateException("the raw consumer took only " + consumed.get() + " of "
                            + messages + " messages in 30 minutes");
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                sampler.close();
                List<Sampler.Sample> samples = sampler.samples();
                return new Result(messages, fill, seconds, messages / seconds,
                        Stats.meanCpu(samples, 0, seconds), samples);
            }
        } finally {
            broker.deleteTopology(RawCeiling.EXCHANGE, RawCeiling.QUEUE);
        }
    }
}
