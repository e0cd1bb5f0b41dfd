package io.lockwatch.notify;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.apache.hc.client5.http.DnsResolver;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.ManagedHttpClientConnectionFactory;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.config.Http1Config;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

/**
 * Posts a signed webhook and says how the endpoint answered, bounded against a receiver that is broken or
 * hostile: the whole attempt has a deadline ({@code lockwatch.notify.timeout}, connecting included), so that it ends
 * well inside its lease and is never made twice at once; the answer is its status (a body still trickling in at
 * the deadline does not undo it); at most {@value #BODY_CAP} bytes of the body are read, and dropped; nothing
 * is decompressed; at most {@value #MAX_HEADERS} header lines of at most {@value #MAX_LINE} bytes are read; no
 * redirects, no cookies, no retries of its own. HTTP/1.1 with keep-alive, one pool for every client: each
 * client's lane bounds its own connections, and the pool has room for every lane's requests and the test pings.
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

    /** The endpoint's status and {@code Retry-After}, or why there was no answer. */
    public record Answer(Integer status, String retryAfter, Exception failure) {

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

    /** Ends the attempts that outlast their deadline; one thread for all posters, it only cancels. */
    private static final ScheduledExecutorService DEADLINES = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "lockwatch-webhook-deadlines");
        t.setDaemon(true);
        return t;
    });

    private final CloseableHttpClient http;
    private final Duration deadline;

    public WebhookPoster(NotifyProperties props, TargetGuard guard) {
        // the lanes' requests, and the test pings beside them
        this(props.connectTimeout(), props.timeout(), guard, props.maxConcurrent() + TestPing.AT_ONCE);
    }

    WebhookPoster(Duration connectTimeout, Duration deadline, TargetGuard guard, int connections) {
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
        this.http = HttpClients.custom()
                .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
                        .setDnsResolver(resolver)
                        .setConnectionFactory(ManagedHttpClientConnectionFactory.builder().http1Config(Http1Config.custom()
                                .setMaxHeaderCount(MAX_HEADERS).setMaxLineLength(MAX_LINE).build()).build())
                        .setDefaultConnectionConfig(ConnectionConfig.custom()
                                .setConnectTimeout(Timeout.of(connectTimeout.compareTo(deadline) < 0 ? connectTimeout : deadline))
                                .setSocketTimeout(attempt).setValidateAfterInactivity(TimeValue.ofSeconds(2))
                                .setTimeToLive(TimeValue.ofMinutes(5)).build())
                        // a route is a host: several clients may share one, so any may take every connection
                        .setMaxConnTotal(connections + 2).setMaxConnPerRoute(connections + 2)
                        .build())
                .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(attempt)
                        .setConnectionRequestTimeout(attempt).setRedirectsEnabled(false).build())
                .disableRedirectHandling().disableCookieManagement().disableAutomaticRetries()
                .disableContentCompression().disableAuthCaching().disableConnectionState()
                .evictIdleConnections(TimeValue.ofSeconds(30))
                .setUserAgent("lockwatch-webhooks/1")
                .build();
    }

    @Override
    public void close() throws IOException {
        http.close();
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
        long startedAt = System.nanoTime();
        HttpPost request;
        try {
            request = new HttpPost(URI.create(url));
        } catch (IllegalArgumentException e) {
            return new Answer(null, null, e);
        }
        request.setEntity(new ByteArrayEntity(body.getBytes(StandardCharsets.UTF_8), JSON));
        headers.forEach(request::setHeader);
        // the socket and response timeouts bound each wait; this bounds the whole attempt, trickles included
        ScheduledFuture<?> expiry = DEADLINES.schedule(request::cancel, deadline.toNanos(), TimeUnit.NANOSECONDS);
        ClassicHttpResponse response = null;
        try {
            response = http.executeOpen(null, request, null);
            Header retryAfter = response.getFirstHeader("Retry-After");
            Answer answer = new Answer(response.getCode(), retryAfter == null ? null : retryAfter.getValue(), null);
            if (!readUpToCap(response.getEntity())) {
                request.cancel(); // the rest of the body is not worth its bytes or its time: the connection goes
            }
            return answer;
        } catch (IOException e) {
            if (request.isCancelled() || System.nanoTime() - startedAt >= deadline.toNanos()) {
                // the same words as before the client changed: operators may search the attempts for them
                return new Answer(null, null, new java.net.http.HttpTimeoutException("timed out: no answer within " + deadline.toMillis() + " ms"));
            }
            return new Answer(null, null, e);
        } finally {
            expiry.cancel(false);
            if (response != null) {
                try {
                    response.close();
                } catch (IOException e) {
                    // the answer stands; the connection is discarded
                }
            }
        }
    }

    /** JSON (RFC 8259 has no charset parameter: it is UTF-8). */
    private static final ContentType JSON = ContentType.create("application/json");

    /**
     * Reads and drops the answer's body, without closing it early: closing would read the rest to reuse the
     * connection, so a body cut short is left to {@code request.cancel()}, which drops the connection instead.
     *
     * @return whether it ended within {@link #BODY_CAP} bytes and the deadline
     */
    private static boolean readUpToCap(HttpEntity entity) {
        if (entity == null) {
            return true;
        }
        byte[] buffer = new byte[8192];
        long read = 0;
        try {
            InputStream in = entity.getContent();
            int n;
            while ((n = in.read(buffer)) >= 0) {
                read += n;
                if (read > BODY_CAP) {
                    return false;
                }
            }
            return true;
        } catch (IOException | RuntimeException e) {
            return false; // cut off at the deadline or by the endpoint: its status was the answer
        }
    }
}
