package io.lockwatch.ingest;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

import com.rabbitmq.client.Channel;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.ThreadPoolProfileBuilder;
import org.apache.camel.util.concurrent.ThreadPoolRejectedPolicy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The batch being gathered from the consumers, and the one thread that applies the closed batches, in the order they
 * closed ({@code routes/ingest.camel.yaml}).
 *
 * <p>A message joins the open batch on its consumer's thread, and the batch closes by {@link IngestBatch#isComplete}'s
 * rule, asked then, by the batch thread as it finishes a batch, and by a timer. While the batch thread is busy, a
 * closed batch could only wait in its queue, so the open one goes on gathering and is handed over the moment the
 * thread is free: under light load a change is applied alone at once, under heavy load batches grow as large as the
 * thread's pace requires (smart batching, as a database's group commit). No timer stands between a change and its
 * transaction; repeats, which notify nobody, wait up to the batch interval for company.
 *
 * <p>Closing a batch and queueing it for the batch thread happen under one lock: with several consumers (one per
 * partition queue), a batch that closed later could otherwise be applied first, and its multiple-ack cover an earlier
 * batch's uncommitted deliveries. One thread and a queue that never refuses, for the same reason; the prefetch bounds
 * the queue to a few batches. Not Camel's Aggregator: it copies every message's exchange and keeps a timeout per
 * message, which was half of the consumer's time per message.
 *
 * <p>A batch still open when the service stops is not acknowledged: the broker redelivers it.
 */
public final class IngestBatches {

    private static final Logger log = LoggerFactory.getLogger(IngestBatches.class);
    static final String THREAD_NAME = "ingest-batches";

    private final int size;
    private final long intervalNanos;
    private final long maxWaitNanos;
    private final boolean forwardArrays;
    private final java.util.function.Predicate<Reading> mayChangeState;

    private final ReentrantLock lock = new ReentrantLock();
    private IngestBatch open;
    /** Batches closed and not yet applied (queued or being applied). */
    private final AtomicInteger closedNotApplied = new AtomicInteger();
    private volatile ThreadPoolExecutor thread;
    /** The route a closed batch goes through, on the batch thread (the readings consumer's); null until it starts. */
    private volatile java.util.function.Consumer<IngestBatch> route;

    /**
     * @param forwardArrays with partitions: the readings of an array message are forwarded to their own
     */
    public IngestBatches(IngestProperties props, boolean forwardArrays) {
        this(props, forwardArrays, r -> false);
    }

    /**
     * @param mayChangeState whether a reading may change its sensor's state, from what is known without a
     *                       transaction ({@link SensorStateStore#mayChangeState}): a batch holding one closes the
     *                       moment the batch thread is free, not after the interval
     */
    public IngestBatches(IngestProperties props, boolean forwardArrays,
                         java.util.function.Predicate<Reading> mayChangeState) {
        this.size = props.batchSize();
        this.intervalNanos = props.batchInterval().toNanos();
        this.maxWaitNanos = props.batchMaxWait().toNanos();
        this.forwardArrays = forwardArrays;
        this.mayChangeState = mayChangeState;
    }

    /** With the Camel context, before the routes: its executor manager stops the thread with the context. */
    void start(CamelContext camel) {
        ExecutorService created = camel.getExecutorServiceManager().newThreadPool(this, THREAD_NAME,
                new ThreadPoolProfileBuilder(THREAD_NAME).poolSize(1).maxPoolSize(1).maxQueueSize(Integer.MAX_VALUE)
                        .allowCoreThreadTimeOut(false).rejectedPolicy(ThreadPoolRejectedPolicy.Abort).build());
        if (!(created instanceof ThreadPoolExecutor executor)) {
            throw new IllegalStateException("Camel made the ingest batch thread a " + created.getClass().getName());
        }
        this.thread = executor;
    }

    /** When the readings consumer starts: where closed batches go from now on, on the batch thread. */
    void deliverTo(java.util.function.Consumer<IngestBatch> route) {
        this.route = route;
    }

    /**
     * When the readings consumer has stopped: its channels are closed and the broker redelivers what the open batch
     * holds, so the open batch is dropped; a batch closed before is still applied, and its ack fails harmlessly.
     */
    void stopDelivering() {
        lock.lock();
        try {
            open = null;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Per message, on its consumer's thread: a reading, a rejection, or an array message's list of them joins the
     * open batch, which may close with it.
     */
    void add(Object parsed, Channel channel, long deliveryTag) {
        lock.lock();
        try {
            if (open == null) {
                open = new IngestBatch();
            }
            open.add(parsed, channel, deliveryTag, forwardArrays, mayChangeState);
            if (open.isComplete(size, intervalNanos, maxWaitNanos, this::isFree)) {
                handOver();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Every few milliseconds, and as the batch thread becomes free: the open batch closes if it is due. */
    public void closeIfDue() {
        lock.lock();
        try {
            if (open != null && open.isComplete(size, intervalNanos, maxWaitNanos, this::isFree)) {
                handOver();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Whether no batch is being applied or waiting to be. */
    public boolean isFree() {
        return closedNotApplied.get() == 0;
    }

    private void handOver() {
        IngestBatch batch = open;
        open = null;
        ThreadPoolExecutor t = thread;
        if (t == null) {
            throw new IllegalStateException("the ingest batch thread is not started");
        }
        closedNotApplied.incrementAndGet();
        try {
            t.execute(() -> apply(batch));
        } catch (RuntimeException e) {
            // stopping: the batch stays unacknowledged and is redelivered
            closedNotApplied.decrementAndGet();
            log.info("A batch of {} readings was not applied while stopping ({}); it will be redelivered", batch.size(), e.toString());
        }
    }

    private void apply(IngestBatch batch) {
        try {
            java.util.function.Consumer<IngestBatch> r = route;
            if (r == null) {
                throw new IllegalStateException("the readings consumer is stopped");
            }
            // the route's own error handling waits out a database or broker that is away and parks what cannot be
            // applied: nothing but a stop comes back here
            r.accept(batch);
        } catch (RuntimeException e) {
            log.warn("A batch of {} readings was not applied ({}); unacknowledged, it will be redelivered", batch.size(), e.toString());
        } finally {
            // free: what gathered while this batch was applied goes now, not at the next message or tick
            if (closedNotApplied.decrementAndGet() == 0) {
                closeIfDue();
            }
        }
    }
}
