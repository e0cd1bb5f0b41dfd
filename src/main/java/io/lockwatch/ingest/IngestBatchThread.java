package io.lockwatch.ingest;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;

import org.apache.camel.CamelContext;
import org.apache.camel.builder.ThreadPoolProfileBuilder;
import org.apache.camel.util.concurrent.ThreadPoolRejectedPolicy;

/**
 * The one thread that applies the closed batches, in order, while the consumer goes on parsing and gathering the
 * next (a batch closed by the completion predicate would otherwise be applied on the consumer's own thread). The
 * batch close asks it whether it is free: a batch that could only wait in its queue goes on gathering instead.
 * <p>
 * Created by Camel's executor service manager, which stops it with the context, and bound in the registry under
 * {@link #NAME} for the aggregator ({@code routes/ingest.camel.yaml}). One thread and a queue that never refuses: a
 * second thread, or a refusal that runs the batch on the caller's thread (Camel's default policy), would let a later
 * batch's multiple-ack cover an earlier, uncommitted one. In Camel 4 a max queue size of 0 or -1 means no queue at
 * all (a hand-over), so the size is given as the largest int; the prefetch bounds it anyway, to a few batches.
 * Refusals happen only once the pool is stopped, and then abort: the batch stays unacknowledged and is redelivered.
 */
public final class IngestBatchThread {

    static final String NAME = "ingest-batches";

    private volatile ThreadPoolExecutor pool;

    void start(CamelContext camel) {
        ExecutorService created = camel.getExecutorServiceManager().newThreadPool(this, NAME,
                new ThreadPoolProfileBuilder(NAME).poolSize(1).maxPoolSize(1).maxQueueSize(Integer.MAX_VALUE)
                        .allowCoreThreadTimeOut(false).rejectedPolicy(ThreadPoolRejectedPolicy.Abort).build());
        if (!(created instanceof ThreadPoolExecutor executor)) {
            throw new IllegalStateException("Camel made the ingest batch thread a " + created.getClass().getName()
                    + ", not a ThreadPoolExecutor: its load cannot be read");
        }
        camel.getRegistry().bind(NAME, ExecutorService.class, executor);
        this.pool = executor;
    }

    /** Whether no batch is being applied or waiting to be. */
    public boolean isFree() {
        ThreadPoolExecutor p = pool;
        return p == null || p.getActiveCount() == 0 && p.getQueue().isEmpty();
    }
}
