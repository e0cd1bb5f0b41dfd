package io.lockwatch.bench;

import java.io.IOException;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;

/**
 * Publishes persistent messages to an exchange on its own connection, with publisher confirms and at most a
 * window of unconfirmed ones at a time (1000 by default; the same settings for the raw ceiling and the service
 * run).
 */
final class Publisher implements ReadingPublisher {

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

    @Override
    public void publish(ReadingSource.Message message) throws IOException, InterruptedException {
        if (!window.tryAcquire(CONFIRM_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            throw new IOException("no publisher confirm from the broker for " + CONFIRM_TIMEOUT.toSeconds() + " s");
        }
        outstanding.add(channel.getNextPublishSeqNo());
        channel.basicPublish(exchange, message.routingKey(), PERSISTENT_JSON, message.body());
        published.incrementAndGet();
    }

    @Override
    public void awaitConfirms() throws InterruptedException, IOException {
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

    @Override
    public long published() {
        return published.get();
    }

    long confirmed() {
        return confirmed.get();
    }

    @Override
    public long nacked() {
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
