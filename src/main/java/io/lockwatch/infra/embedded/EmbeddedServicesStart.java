package io.lockwatch.infra.embedded;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the embedded PostgreSQL and AMQP broker side by side, each on a thread of its own, the moment the first of
 * them is asked for: PostgreSQL waits on its child process while the broker opens its store, where one after the other
 * the context waited for both in turn. It owns both: closed after every bean that used either (the broker first), and
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

    @Override
    public void close() {
        // a start still under way is waited for, so that what it started is stopped too
        broker.handle((b, failed) -> b).join();
        postgres.handle((p, failed) -> p).join();
        EmbeddedAmqpBroker b = broker.getNow(null);
        if (b != null && !broker.isCompletedExceptionally()) {
            try {
                b.close();
            } catch (RuntimeException e) {
                log.error("The embedded AMQP broker did not stop cleanly", e);
            }
        }
        EmbeddedPostgresServer p = postgres.isCompletedExceptionally() ? null : postgres.getNow(null);
        if (p != null) {
            try {
                p.close();
            } catch (java.io.IOException | RuntimeException e) {
                log.error("The embedded PostgreSQL did not stop cleanly", e);
            }
        }
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
