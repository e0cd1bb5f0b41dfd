package io.lockwatch.bench;

import java.io.IOException;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;

/**
 * Publishes persistent messages to an exchange on its own connection, with publisher confirms and at most a
 * window of unconfirmed ones at a time (1000 by default; the same settings for the raw ceiling and the service
 * run).
 */
final class Publisher implements AutoCloseable {

    private static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(60);
    private static final AMQP.BasicProperties PERSISTENT_JSON = new AMQP.BasicProperties.Builder()
            .contentType("application/json")
            .deliveryMode(2)
            .build();

    private final Connection connection;
    private final Channel channel;
    private final String exchange;
    private final int maxOutstanding;
    private final Semaphore window;
    private final ConcurrentSkipListSet<Long> outstanding = new ConcurrentSkipListSet<>();
    private final AtomicLong published = new AtomicLong();
    private final AtomicLong confirmed = new AtomicLong();
    private final AtomicLong nacked = new AtomicLong();

    Publisher(ConnectionFactory factory, String exchange, String connectionName, int maxOutstanding)
            throws IOException, TimeoutException {
        this.exchange = exchange;
        this.maxOutstanding = maxOutstanding;
        this.window = new Semaphore(maxOutstanding);
        this.connection = factory.newConnection(connectionName);
        this.channel = connection.createChannel();
        channel.confirmSelect();
        channel.addConfirmListener((tag, multiple) -> settle(tag, multiple, confirmed),
                (tag, multiple) -> settle(tag, multiple, nacked));
    }

    /** Publishes one message, waiting while the window of unconfirmed messages is full. */
    void publish(ReadingSource.Message message) throws IOException, InterruptedException {
        if (!window.tryAcquire(CONFIRM_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            throw new IOException("no publisher confirm from the broker for " + CONFIRM_TIMEOUT.toSeconds() + " s");
        }
        outstanding.add(channel.getNextPublishSeqNo());
        channel.basicPublish(exchange, message.routingKey(), PERSISTENT_JSON, message.body());
        published.incrementAndGet();
    }

    /**
     * Publishes messages from the source for the given time.
     *
     * @param ratePerSecond at most this many per second; 0 = as fast as the confirm window allows
     * @return how many were published
     */
    long publishFor(Supplier<ReadingSource.Message> source, Duration duration, double ratePerSecond)
            throws IOException, InterruptedException {
        long start = System.nanoTime();
        long end = start + duration.toNanos();
        double interval = ratePerSecond > 0 ? 1e9 / ratePerSecond : 0;
        long n = 0;
        while (true) {
            long now = System.nanoTime();
            if (now - end >= 0) {
                return n;
            }
            if (interval > 0) {
                long due = start + (long) (n * interval);
                if (due - now > 0) {
                    LockSupport.parkNanos(Math.min(due - now, end - now));
                    continue;
                }
            }
            publish(source.get());
            n++;
        }
    }

    /** Waits until every published message is confirmed (or nacked). */
    void awaitConfirms() throws InterruptedException, IOException {
        if (!window.tryAcquire(maxOutstanding, CONFIRM_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            throw new IOException(outstanding.size() + " messages still unconfirmed after " + CONFIRM_TIMEOUT.toSeconds() + " s");
        }
        window.release(maxOutstanding);
    }

    /**
     * Waits until the connection is open again (after a broker restart the client recovers it, and the channel in
     * confirm mode, by itself).
     */
    void awaitOpen(Duration timeout) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!(connection.isOpen() && channel.isOpen())) {
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("the publisher's connection did not recover within " + timeout.toSeconds() + " s");
            }
            Thread.sleep(200);
        }
    }

    long published() {
        return published.get();
    }

    long confirmed() {
        return confirmed.get();
    }

    long nacked() {
        return nacked.get();
    }

    private void settle(long tag, boolean multiple, AtomicLong into) {
        int n = 0;
        if (multiple) {
            for (Iterator<Long> it = outstanding.headSet(tag, true).iterator(); it.hasNext(); ) {
                it.next();
                it.remove();
                n++;
            }
        } else if (outstanding.remove(tag)) {
            n = 1;
        }
        into.addAndGet(n);
        window.release(n);
    }

    @Override
    public void close() {
        try {
            connection.close(5000);
        } catch (IOException | RuntimeException e) {
            // already closed
        }
    }
}
