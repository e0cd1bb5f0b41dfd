package io.lockwatch.api;

import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockwatch.notify.Feed;
import io.lockwatch.notify.FeedWatch;

/**
 * The feed's long polls, held without a thread, whichever door they came in by (the API's servlet filter,
 * {@link FeedLongPoll}, or the feed listener, {@link FeedListener}): a read that would find nothing waits in
 * {@link FeedWatch} until an event of its client is recorded or its wait is over, then reads its page. Whether there
 * is anything to read is, for a cursor of the watch's time, what the watch has noted; the database is asked only of
 * an older cursor. A read is answered once.
 */
final class HeldReads {

    /** Where a read's answer goes: its page as the route's JSON, or the failure of the read. */
    interface Reply {
        void page(byte[] json);

        void failed(RuntimeException e);
    }

    private final FeedWatch watch;
    private final Feed feed;
    /**
     * Ends the held reads no event ends first. Its own, not a bean: an Executor bean would displace Spring Boot's
     * task executor, on which platform-http answers.
     */
    private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "feed-long-poll-timer");
        t.setDaemon(true);
        return t;
    });
    /**
     * Reads the pages of the reads that go on, a few at a time. A watch's look wakes every client with a new event at
     * once: on the web server's threads those reads took every database connection together, and ingest's batches
     * and the webhooks' claims waited behind them. The answer is written back by its door, so that a slow reader
     * holds none of these.
     */
    private final ThreadPoolExecutor readers;
    private volatile boolean stopping;

    HeldReads(FeedWatch watch, Feed feed, int readThreads) {
        this.watch = watch;
        this.feed = feed;
        AtomicInteger n = new AtomicInteger();
        this.readers = new ThreadPoolExecutor(readThreads, readThreads, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, "feed-read-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        // a read woken by its event takes its timeout out of the queue, and the reply it holds with it
        timer.setRemoveOnCancelPolicy(true);
    }

    /** Whether the service is stopping: a read is then answered at once, not held. */
    boolean stopping() {
        return stopping;
    }

    /**
     * Reads the client's page after the cursor, at once if there is something to read (or {@code waitSeconds} is 0),
     * else when its next event is recorded or the wait is over. Returns at once; the reply comes on a reader's thread.
     */
    void read(UUID client, String after, int limit, int waitSeconds, Reply reply) {
        Held held = new Held(client, after, limit, reply);
        if (waitSeconds == 0 || stopping) {
            held.run();
            return;
        }
        // what the watch has seen decides, without the database, for a cursor of this instance's time
        if (watch.holdIfNothingNew(client, after, held)) {
            held.until(waitSeconds);
            answerIfStopping(held);
            return;
        }
        if (quietNow(client, after)) {
            watch.await(client, held);
            held.until(waitSeconds);
            // what was recorded while it was being registered
            if (!quietNow(client, after)) {
                held.run();
            }
            answerIfStopping(held);
            return;
        }
        held.run(); // something to read now
    }

    /** Runs work that may ask the database (a key, a client's existence) off a door's own threads. */
    void offTheDoorsThreads(Runnable work) {
        readers.execute(work);
    }

    /**
     * The service is stopping: every held read is answered now with what there is, as at the end of its wait, and no
     * read is held from here on.
     */
    void endAll() {
        stopping = true;
        watch.releaseAll().forEach(Runnable::run);
    }

    void close() {
        timer.shutdownNow();
        readers.shutdownNow();
    }

    /** Whether the client exists (a client's key is its own client's). */
    boolean exists(UUID client) {
        return watch.exists(client);
    }

    /**
     * A read that was being held while the service began to stop came after {@link #endAll} took the others:
     * answered now, not at the end of its wait, which a graceful shutdown would wait for.
     */
    private void answerIfStopping(Held held) {
        if (stopping) {
            held.run();
        }
    }

    /** Nothing to read now (a database that is away: read now, and let the reply tell the failure). */
    private boolean quietNow(UUID client, String after) {
        try {
            return watch.nothingToRead(client, after);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** A held read: answered once, woken by its client's event or at the end of its wait. */
    private final class Held implements Runnable {
        private final UUID client;
        private final String after;
        private final int limit;
        private final Reply reply;
        private final AtomicBoolean goneOn = new AtomicBoolean();
        private volatile java.util.concurrent.Future<?> timeout;

        Held(UUID client, String after, int limit, Reply reply) {
            this.client = client;
            this.after = after;
            this.limit = limit;
            this.reply = reply;
        }

        void until(int seconds) {
            timeout = timer.schedule(this, seconds, TimeUnit.SECONDS);
            if (goneOn.get()) {
                timeout.cancel(false); // woken before its timeout was set
            }
        }

        @Override
        public void run() {
            if (goneOn.compareAndSet(false, true)) {
                watch.cancel(client, this);
                java.util.concurrent.Future<?> t = timeout;
                if (t != null) {
                    t.cancel(false);
                }
                // neither the watch nor the timer waits for the database
                try {
                    readers.execute(this::answer);
                } catch (RejectedExecutionException stopped) {
                    reply.failed(stopped);
                }
            }
        }

        private void answer() {
            byte[] body;
            try {
                body = Json.MAPPER.writeValueAsBytes(feed.read(client, after, limit));
            } catch (RuntimeException e) {
                reply.failed(e);
                return;
            } catch (java.io.IOException e) {
                reply.failed(new IllegalStateException(e));
                return;
            }
            reply.page(body);
        }
    }
}
