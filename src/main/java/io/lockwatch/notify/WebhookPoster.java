package io.lockwatch.notify;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import javax.net.ssl.SSLContext;

import org.apache.hc.client5.http.DnsResolver;
import org.apache.hc.client5.http.async.AsyncExecRuntime;
import org.apache.hc.client5.http.async.methods.SimpleHttpRequest;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.async.methods.SimpleRequestProducer;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.config.TlsConfig;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.client5.http.protocol.HttpClientContext;
import org.apache.hc.client5.http.ssl.ClientTlsStrategyBuilder;
import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.ProtocolVersion;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.http.nio.AsyncResponseConsumer;
import org.apache.hc.core5.http.nio.entity.AbstractBinDataConsumer;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.http2.HttpVersionPolicy;
import org.apache.hc.core5.http2.config.H2Config;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.ssl.SSLContexts;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

/**
 * Posts a signed webhook and says how the endpoint answered, bounded against a receiver that is broken or
 * hostile: the whole attempt has a deadline ({@code lockwatch.notify.timeout}, connecting included), so that it ends
 * well inside its lease and is never made twice at once; the answer is its status (a body still trickling in at
 * the deadline does not undo it); at most {@value #BODY_CAP} bytes of the body are read, and dropped; nothing
 * is decompressed; at most {@value #MAX_HEADERS} header lines of at most {@value #MAX_LINE} bytes are read (an
 * HTTP/2 header list of at most {@value #MAX_HEADER_LIST} bytes); no redirects, no cookies, and no retries of its own
 * but one: see {@link ClosedConnectionRetry}.
 *
 * <p>HTTP/2 where the endpoint offers it: over TLS the protocol is negotiated by ALPN, and an endpoint that offers
 * only HTTP/1.1, or plain http, gets HTTP/1.1 with keep-alive. One pool for every client: each client's lane bounds
 * its own requests, and the pool has room for every lane's requests and the test pings. A connection carries one
 * exchange at a time, whatever its protocol: HttpClient 5.5's sharing of an HTTP/2 connection between exchanges is
 * experimental, and when one exchange on it fails or times out it closes the connection under all the others, so
 * one slow event would fail every request in flight to that endpoint.
 *
 * <p>The client's DNS resolver is {@link TargetGuard#connectableAddresses}: the host is resolved once, each address
 * checked, and only those are connected to (Apache HttpClient, because the JDK's client has no resolver of its own
 * to give, so the guard's lookup and the connection's were two). TLS still verifies the host's name.
 */
public class WebhookPoster implements AutoCloseable {

    /** What of an answer is read at most: the status and headers matter, the body does not. */
    static final int BODY_CAP = 64 * 1024;
    static final int MAX_HEADERS = 64;
    static final int MAX_LINE = 8 * 1024;
    static final int MAX_HEADER_LIST = 64 * 1024;

    /**
     * The endpoint's status, {@code Retry-After} and the HTTP version it answered in ({@code 1.1} or {@code 2}, as
     * OpenTelemetry's {@code network.protocol.version} writes it), or why there was no answer.
     */
    public record Answer(Integer status, String retryAfter, Exception failure, String protocol) {

        Answer(Exception failure) {
            this(null, null, failure, null);
        }

        /** What went wrong, on one line as an attempt records it; null for a 2xx. */
        public String error() {
            if (refusal() != null) {
                return "target refused: " + refusal();
            }
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

        /** Why the guard would not let the poster connect; null if it did. */
        public String refusal() {
            return failure instanceof TargetGuard.Refused r ? r.getMessage() : null;
        }

        private static String describe(Throwable t) {
            return t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
        }
    }

    private final CloseableHttpAsyncClient http;
    private final Duration deadline;

    public WebhookPoster(NotifyProperties props, TargetGuard guard) {
        // the lanes' requests, and the test pings beside them
        this(props.connectTimeout(), props.timeout(), guard, props.maxConcurrent() + TestPing.AT_ONCE, SSLContexts.createDefault());
    }

    WebhookPoster(Duration connectTimeout, Duration deadline, TargetGuard guard, int connections) {
        this(connectTimeout, deadline, guard, connections, SSLContexts.createDefault());
    }

    /** @param tls whom TLS trusts: the JDK's trusted authorities, or a test's own */
    WebhookPoster(Duration connectTimeout, Duration deadline, TargetGuard guard, int connections, SSLContext tls) {
        this.deadline = deadline;
        DnsResolver resolver = new DnsResolver() {
            @Override
            public java.net.InetAddress[] resolve(String host) throws java.net.UnknownHostException {
                return guard.connectableAddresses(host);
            }

            @Override
            public String resolveCanonicalHostname(String host) {
                return host; // never asked: no authentication schemes
            }
        };
        Timeout attempt = Timeout.of(deadline);
        Timeout connect = Timeout.of(connectTimeout.compareTo(deadline) < 0 ? connectTimeout : deadline);
        this.http = HttpAsyncClients.custom()
                .setConnectionManager(PoolingAsyncClientConnectionManagerBuilder.create()
                        .setDnsResolver(resolver)
                        .setTlsStrategy(ClientTlsStrategyBuilder.create().setSslContext(tls).buildAsync())
                        .setDefaultTlsConfig(TlsConfig.custom().setVersionPolicy(HttpVersionPolicy.NEGOTIATE)
                                .setHandshakeTimeout(connect).build())
                        .setDefaultConnectionConfig(ConnectionConfig.custom()
                                .setConnectTimeout(connect)
                                .setSocketTimeout(attempt).setValidateAfterInactivity(TimeValue.ofSeconds(2))
                                .setTimeToLive(TimeValue.ofMinutes(5)).build())
                        // a route is a host: several clients may share one, so any may take every connection
                        .setMaxConnTotal(connections + 2).setMaxConnPerRoute(connections + 2)
                        .build())
                .setHttp1Config(Http1Config.custom().setMaxHeaderCount(MAX_HEADERS).setMaxLineLength(MAX_LINE).build())
                .setH2Config(H2Config.custom().setPushEnabled(false).setMaxHeaderListSize(MAX_HEADER_LIST).build())
                .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(attempt)
                        .setConnectionRequestTimeout(attempt).setRedirectsEnabled(false).build())
                .setRetryStrategy(new ClosedConnectionRetry())
                .addExecInterceptorFirst("lockwatch-connection-handle", (request, entity, scope, chain, callback) -> {
                    scope.clientContext.setAttribute(CONNECTION, scope.execRuntime);
                    chain.proceed(request, entity, scope, callback);
                })
                .disableRedirectHandling().disableCookieManagement()
                .disableAuthCaching().disableConnectionState()
                .evictIdleConnections(TimeValue.ofSeconds(30))
                .setUserAgent("lockwatch-webhooks/1")
                .build();
        http.start();
    }

    @Override
    public void close() {
        // after the routes have stopped: no attempt waits for an answer any more, so nothing to let finish
        http.close(CloseMode.IMMEDIATE);
    }

    /** The most one attempt can take. */
    Duration deadline() {
        return deadline;
    }

    /** Call: the prepared request, posted; its answer, or why there was none. */
    public Attempt.Posted post(Attempt.Prepared prepared) {
        Attempt.Request r = prepared.request();
        long sent = System.nanoTime();
        Answer answer = send(r.url(), r.headers(), r.body());
        return new Attempt.Posted(prepared, answer, System.nanoTime() - sent);
    }

    /** One POST of a JSON body with the given headers; never throws for what the endpoint or network does. */
    public Answer send(String url, Map<String, String> headers, String body) {
        SimpleHttpRequest request;
        try {
            SimpleRequestBuilder builder = SimpleRequestBuilder.post(URI.create(url))
                    .setBody(body.getBytes(StandardCharsets.UTF_8), JSON);
            headers.forEach(builder::setHeader);
            request = builder.build();
        } catch (IllegalArgumentException e) {
            return new Answer(e);
        }
        CappedAnswer consumer = new CappedAnswer(System.nanoTime() + deadline.toNanos());
        HttpClientContext context = HttpClientContext.create();
        AtomicBoolean givenUp = new AtomicBoolean();
        context.setAttribute(ClosedConnectionRetry.GIVEN_UP, givenUp);
        Future<Answer> exchange = http.execute(SimpleRequestProducer.create(request), consumer, context, null);
        try {
            return exchange.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | CancellationException e) {
            // the response timeout bounds each wait; this bounds the whole attempt, trickles included
            giveUp(exchange, givenUp, context);
            Answer head = consumer.head;
            // the same words as before the client changed: operators may search the attempts for them
            return head != null ? head : new Answer(new java.net.http.HttpTimeoutException("timed out: no answer within " + deadline.toMillis() + " ms"));
        } catch (ExecutionException e) {
            Answer head = consumer.head;
            // a body cut short, at the cap or by the endpoint, leaves the status as the answer
            return head != null ? head : new Answer(e.getCause() instanceof Exception cause ? cause : e);
        } catch (InterruptedException e) {
            giveUp(exchange, givenUp, context);
            Thread.currentThread().interrupt();
            return new Answer(e);
        }
    }

    /** The context attribute, the exchange's {@link AsyncExecRuntime}: its handle on the connection it leased. */
    private static final String CONNECTION = "lockwatch.attempt.connection";

    /**
     * Stops an attempt and closes its connection at once. Given up first: that close must not read as one to send
     * the request again on. Cancelling the exchange alone does not always close it: HttpClient 5.5 sets the
     * exchange's cancel as the dependency of its future when the connection is ready, and the thread that asked for
     * a new connection may set the finished connect after it, so that a cancel reaches only that; the exchange
     * then reads on as long as the endpoint trickles its answer, and its connection stays leased from the pool
     * every client shares. Discarding the endpoint closes the connection whatever the exchange's state.
     */
    private static void giveUp(Future<Answer> exchange, AtomicBoolean givenUp, HttpClientContext context) {
        givenUp.set(true);
        exchange.cancel(true);
        if (context.getAttribute(CONNECTION) instanceof AsyncExecRuntime connection) {
            connection.discardEndpoint();
        }
    }

    /**
     * Sends a request once more, at once, when its connection was closed under it before any answer came: the
     * request was not sent (the connection was found closed), the endpoint reset it, or it closed it unanswered.
     * That is what a kept-alive connection does when the endpoint has just closed it as idle or over its own count
     * (the JDK's server keeps 200 idle connections, nginx and load balancers have timeouts of their own), and it
     * would otherwise cost an event the first delay of the retry schedule. As browsers do on a reused connection,
     * a POST is sent again: its {@code webhook-id} lets a receiver that did get it drop the copy. Not after a
     * timeout, a refused connection, TLS or an answer of any status: those are the endpoint's own; and never once
     * the attempt has given up ({@link #GIVEN_UP}), which closes the connection itself.
     */
    static final class ClosedConnectionRetry implements org.apache.hc.client5.http.HttpRequestRetryStrategy {
        /** The context attribute, an AtomicBoolean, set when {@link #send} stops waiting for the answer. */
        static final String GIVEN_UP = "lockwatch.attempt.given-up";

        @Override
        public boolean retryRequest(org.apache.hc.core5.http.HttpRequest request, IOException failure, int execCount, HttpContext context) {
            return execCount <= 1 && !(context.getAttribute(GIVEN_UP) instanceof AtomicBoolean g && g.get())
                    && (failure instanceof org.apache.hc.core5.http.RequestNotExecutedException
                    || failure instanceof org.apache.hc.core5.http.ConnectionClosedException
                    || failure instanceof java.net.SocketException && !(failure instanceof java.net.ConnectException
                            || failure instanceof java.net.NoRouteToHostException));
        }

        @Override
        public boolean retryRequest(HttpResponse response, int execCount, HttpContext context) {
            return false;
        }

        @Override
        public TimeValue getRetryInterval(HttpResponse response, int execCount, HttpContext context) {
            return TimeValue.ZERO_MILLISECONDS;
        }
    }

    /** JSON (RFC 8259 has no charset parameter: it is UTF-8). */
    private static final ContentType JSON = ContentType.create("application/json");

    /**
     * Takes the answer's status and headers, then reads and drops its body up to {@link #BODY_CAP} and the
     * attempt's deadline: past either the exchange fails, which drops the connection (HTTP/1.1) or resets the
     * stream (HTTP/2) instead of reading on. The deadline is kept here too because cancelling the client's future
     * does not always reach an exchange whose answer has begun (HttpClient ignores it once the head of a 4xx or 5xx
     * is in, for one), and a body trickled a byte at a time would hold its connection for as long as it lasts.
     * The answer is handed over once the exchange has given its connection back to the pool, so that the lane's
     * next request finds it there rather than opening another.
     */
    private static final class CappedAnswer extends AbstractBinDataConsumer implements AsyncResponseConsumer<Answer> {
        private final long deadlineAt;
        volatile Answer head;
        private volatile FutureCallback<Answer> callback;
        private volatile boolean ended;
        private long read;

        CappedAnswer(long deadlineAt) {
            this.deadlineAt = deadlineAt;
        }

        @Override
        public void consumeResponse(HttpResponse response, EntityDetails entity, HttpContext context, FutureCallback<Answer> callback) {
            Header retryAfter = response.getFirstHeader("Retry-After");
            ProtocolVersion version = context.getProtocolVersion();
            this.head = new Answer(response.getCode(), retryAfter == null ? null : retryAfter.getValue(), null,
                    version == null ? null : version.getMajor() >= 2 ? String.valueOf(version.getMajor())
                            : version.getMajor() + "." + version.getMinor());
            this.callback = callback;
            this.ended = entity == null;
        }

        @Override
        public void informationResponse(HttpResponse response, HttpContext context) {
            // a 1xx is not the answer
        }

        @Override
        protected int capacityIncrement() {
            return BODY_CAP;
        }

        @Override
        protected void data(ByteBuffer src, boolean endOfStream) throws IOException {
            read += src.remaining();
            src.position(src.limit());
            if (read > BODY_CAP) {
                throw new IOException("answer longer than " + BODY_CAP + " bytes: not read further");
            }
            if (System.nanoTime() - deadlineAt > 0) {
                throw new IOException("answer still coming at the deadline: not read further");
            }
        }

        @Override
        protected void completed() {
            ended = true;
        }

        @Override
        public void failed(Exception cause) {
            ended = false; // the exchange's future fails with the cause; the head, if any, is still the answer
        }

        @Override
        public void releaseResources() {
            // the body was never kept; the exchange has released its connection by now
            FutureCallback<Answer> done = callback;
            if (ended && done != null) {
                callback = null;
                done.completed(head);
            }
        }
    }
}
