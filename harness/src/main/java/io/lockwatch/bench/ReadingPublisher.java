package io.lockwatch.bench;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/** What the benchmark publishes readings with: over AMQP ({@link Publisher}) or MQTT ({@link MqttPublisher}). */
interface ReadingPublisher extends AutoCloseable {

    /** Publishes one reading, waiting while the window of unconfirmed ones is full. */
    void publish(ReadingSource.Message message) throws IOException, InterruptedException;

    /** Waits until every published reading is confirmed by the broker (or refused). */
    void awaitConfirms() throws IOException, InterruptedException;

    long published();

    long nacked();

    /**
     * Publishes readings from the source for the given time.
     *
     * @param ratePerSecond at most this many per second; 0 = as fast as the confirm window allows
     * @return how many were published
     */
    default long publishFor(Supplier<ReadingSource.Message> source, Duration duration, double ratePerSecond)
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
}
