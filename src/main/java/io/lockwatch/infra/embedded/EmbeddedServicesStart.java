package io.lockwatch.infra.embedded;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the embedded PostgreSQL and AMQP broker side by side, each on a thread of its own, the moment it is made
 * ({@link EmbeddedServicesEarlyStart}): PostgreSQL waits on its child process while the broker opens its store, where
 * one after the other the context waited for both in turn. It owns both: closed after every bean that used either (the broker first), and
 * it closes one that did start when the other failed, so that a failed start leaves no postmaster behind.
 */
final class EmbeddedServicesStart implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(EmbeddedServicesStart.class);

    interface Starter<T> {
        T start() throws Exception;
    }

    private final CompletableFuture<EmbeddedPostgresServer> postgres;
    private final CompletableFuture<EmbeddedAmqpBroker> broker;

    EmbeddedServicesStart(Starter<EmbeddedPostgresServer> postgres, Starter<EmbeddedAmqpBroker> broker) {
        this.postgres = CompletableFuture.supplyAsync(unchecked(postgres), thread("embedded-postgres-start"));
        this.broker = CompletableFuture.supplyAsync(unchecked(broker), thread("embedded-broker-start"));
    }

    EmbeddedPostgresServer postgres() throws Exception {
        return await(postgres);
    }

    EmbeddedAmqpBroker broker() throws Exception {
        return await(broker);
    }

    private static <T> T await(CompletableFuture<T> start) throws Exception {
        try {
            return start.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    /**
     * Stops both side by side as well: nothing connects to either any more, and they share nothing, while one after
     * the other the stop waited for the broker's housekeeping and then for the postmaster.
     */
    @Override
    public void close() {
        CompletableFuture<Void> brokerStopped = stopped(broker, b -> b.close(), "embedded-broker-stop",
                "The embedded AMQP broker did not stop cleanly");
        CompletableFuture<Void> postgresStopped = stopped(postgres, EmbeddedPostgresServer::close, "embedded-postgres-stop",
                "The embedded PostgreSQL did not stop cleanly");
        brokerStopped.join();
        postgresStopped.join();
    }

    /** Once its start is over (a start still under way is waited for, so that what it started is stopped too). */
    private static <T> CompletableFuture<Void> stopped(CompletableFuture<T> start, Closer<T> closer, String thread,
                                                       String failure) {
        return start.handle((service, failed) -> service).thenAcceptAsync(service -> {
            if (service == null) {
                return;
            }
            try {
                closer.close(service);
            } catch (Exception e) {
                log.error(failure, e);
            }
        }, thread(thread));
    }

    interface Closer<T> {
        void close(T service) throws Exception;
    }

    private static <T> java.util.function.Supplier<T> unchecked(Starter<T> starter) {
        return () -> {
            try {
                return starter.start();
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        };
    }

    private static Executor thread(String name) {
        return task -> {
            Thread t = new Thread(task, name);
            t.setDaemon(true);
            t.start();
        };
    }
}
