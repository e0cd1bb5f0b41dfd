package io.lockwatch.notify;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;

import org.apache.camel.Exchange;

/**
 * Posts a signed webhook and says how the endpoint answered, bounded against a receiver that is broken or
 * hostile: the whole attempt has a deadline ({@code lockwatch.notify.timeout}, connecting included), so that it ends
 * well inside its lease and is never made twice at once; the answer is its status (a body still trickling in at
 * the deadline does not undo it); at most {@value #BODY_CAP} bytes of the body are read, and dropped; nothing
 * is decompressed; the answer's headers are within the JDK client's limit ({@code jdk.http.maxHeaderSize}, 384
 * KiB unless set); no redirects, no cookies, no retries of its own. HTTP/1.1, one pool for every client.
 */
public class WebhookPoster {

    /** What of an answer is read at most: the status and headers matter, the body does not. */
    static final int BODY_CAP = 64 * 1024;

    /** Where the route's step leaves its {@link Answer} on the exchange. */
    static final String ANSWER = "lockwatch.webhookAnswer";

    /** The endpoint's status and {@code Retry-After}, or why there was no answer. */
    public record Answer(Integer status, String retryAfter, Exception failure) {

        /** What went wrong, on one line as an attempt records it; null for a 2xx. */
        public String error() {
            if (failure != null) {
                Throwable root = failure;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                String msg = describe(failure) + (root == failure ? "" : " (" + describe(root) + ")");
                msg = msg.lines().findFirst().orElse(msg);
                return msg.length() > 300 ? msg.substring(0, 300) : msg;
            }
            return status >= 200 && status < 300 ? null : "HTTP " + status;
        }

        private static String describe(Throwable t) {
            return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
        }
    }

    /** Ends the bodies that outlast their attempt's deadline; one thread for all posters, it only cancels. */
    private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "lockwatch-webhook-deadlines");
        t.setDaemon(true);
        return t;
    });

    private final HttpClient http;
    private final Duration deadline;

    public WebhookPoster(NotifyProperties props) {
        this(props.connectTimeout(), props.timeout());
    }

    WebhookPoster(Duration connectTimeout, Duration deadline) {
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(connectTimeout).followRedirects(HttpClient.Redirect.NEVER).build();
        this.deadline = deadline;
    }

    /** The most one attempt can take. */
    Duration deadline() {
        return deadline;
    }

    /** The route's step: the request prepared on the exchange; the {@link Answer} put back on it. */
    public void post(Exchange exchange) {
        org.apache.camel.Message m = exchange.getMessage();
        exchange.setProperty(ANSWER, send(m.getHeader(Exchange.HTTP_URI, String.class), Map.of(
                "webhook-id", m.getHeader("webhook-id", String.class),
                "webhook-timestamp", m.getHeader("webhook-timestamp", String.class),
                "webhook-signature", m.getHeader("webhook-signature", String.class)), m.getBody(String.class)));
    }

    /**
     * One POST of a JSON body with the given headers; never throws for what the endpoint or network does.
     * Synchronous on purpose: the JDK client's {@code sendAsync} hands each response to the default executor of
     * CompletableFuture, which on a machine of two cores or fewer starts a thread per call.
     */
    public Answer send(String url, Map<String, String> headers, String body) {
        long deadlineAt = System.nanoTime() + deadline.toNanos();
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).timeout(deadline)
                .header("Content-Type", "application/json").header("User-Agent", "lockwatch-webhooks/1")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(request::header);
        try {
            // the request timeout bounds the wait for the status and headers; the body's own deadline the rest
            HttpResponse<Void> response = http.send(request.build(), info -> new CappedDiscard(deadlineAt));
            return new Answer(response.statusCode(), response.headers().firstValue("Retry-After").orElse(null), null);
        } catch (java.net.http.HttpConnectTimeoutException e) {
            return new Answer(null, null, e);
        } catch (HttpTimeoutException e) {
            return new Answer(null, null, new HttpTimeoutException("timed out: no answer within " + deadline.toMillis() + " ms"));
        } catch (IOException e) {
            return new Answer(null, null, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Answer(null, null, e);
        }
    }

    /** Reads the answer's body up to {@link #BODY_CAP} bytes, keeping none; beyond that, stops reading. */
    private static final class CappedDiscard implements HttpResponse.BodySubscriber<Void> {

        private final CompletableFuture<Void> done = new CompletableFuture<>();
        private final long deadlineAt;
        private volatile Flow.Subscription subscription;
        private ScheduledFuture<?> expiry;
        private long read;

        /** @param deadlineAt by when ({@link System#nanoTime()}) the body must be over: the answer stands then */
        CappedDiscard(long deadlineAt) {
            this.deadlineAt = deadlineAt;
        }

        @Override
        public CompletionStage<Void> getBody() {
            return done;
        }

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            this.subscription = subscription;
            expiry = DEADLINES.schedule(this::stop, Math.max(0, deadlineAt - System.nanoTime()), TimeUnit.NANOSECONDS);
            subscription.request(Long.MAX_VALUE);
        }

        /** Enough read: the rest of the body is not worth its bytes or its time (the connection is closed). */
        private void stop() {
            if (expiry != null) {
                expiry.cancel(false);
            }
            subscription.cancel();
            done.complete(null);
        }

        @Override
        public void onNext(List<ByteBuffer> buffers) {
            for (ByteBuffer b : buffers) {
                read += b.remaining();
            }
            if (read > BODY_CAP && !done.isDone()) {
                stop();
            }
        }

        @Override
        public void onError(Throwable failure) {
            expiry.cancel(false);
            done.completeExceptionally(failure);
        }

        @Override
        public void onComplete() {
            expiry.cancel(false);
            done.complete(null);
        }
    }
}
