package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import javax.net.ssl.SSLContext;

import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.Message;
import org.apache.hc.core5.http.URIScheme;
import org.apache.hc.core5.http.impl.bootstrap.HttpAsyncServer;
import org.apache.hc.core5.http.nio.AsyncEntityProducer;
import org.apache.hc.core5.http.nio.AsyncRequestConsumer;
import org.apache.hc.core5.http.nio.AsyncServerRequestHandler;
import org.apache.hc.core5.http.nio.DataStreamChannel;
import org.apache.hc.core5.http.nio.entity.BasicAsyncEntityConsumer;
import org.apache.hc.core5.http.nio.support.AsyncResponseBuilder;
import org.apache.hc.core5.http.nio.support.BasicRequestConsumer;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.http2.HttpVersionPolicy;
import org.apache.hc.core5.http2.impl.nio.bootstrap.H2ServerBootstrap;
import org.apache.hc.core5.http2.ssl.H2ServerTlsStrategy;
import org.apache.hc.core5.io.CloseMode;
import org.apache.hc.core5.ssl.SSLContexts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which protocol a webhook goes by: HTTP/2 where the endpoint offers it over TLS (ALPN), HTTP/1.1 where it offers
 * only that or listens on plain http, with connections kept for the next request either way. The receivers are
 * HttpCore's own HTTP/2-capable server on loopback, with a key made for this run and trusted only by the poster
 * under test.
 */
class WebhookPosterProtocolTest {

    static final char[] STORE_PASSWORD = "receiver-test-key".toCharArray();

    @TempDir
    static Path keys;
    static SSLContext serverTls;
    static SSLContext clientTls;

    /** What the receiver saw: each request's protocol, peer, body and signature, and how much of a long answer went out. */
    final List<String> protocols = new CopyOnWriteArrayList<>();
    final List<String> bodies = new CopyOnWriteArrayList<>();
    final List<String> signatures = new CopyOnWriteArrayList<>();
    final Set<String> peers = java.util.concurrent.ConcurrentHashMap.newKeySet();
    final AtomicLong bodyBytesSent = new AtomicLong();
    HttpAsyncServer server;
    com.sun.net.httpserver.HttpsServer http11Server;
    WebhookPoster poster;

    @BeforeAll
    static void makeKey() throws Exception {
        // a self-signed certificate for the loopback address, made by the JDK's own keytool for this run only
        Path store = keys.resolve("receiver.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-alias", "receiver", "-keyalg", "EC", "-groupname", "secp256r1", "-validity", "2",
                "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost", "-storetype", "PKCS12",
                "-keystore", store.toString(), "-storepass", new String(STORE_PASSWORD), "-keypass", new String(STORE_PASSWORD))
                .redirectErrorStream(true).start();
        String output = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(keytool.exitValue()).as(output).isZero();
        serverTls = SSLContexts.custom().loadKeyMaterial(store.toFile(), STORE_PASSWORD, STORE_PASSWORD).build();
        clientTls = SSLContexts.custom().loadTrustMaterial(store.toFile(), STORE_PASSWORD).build();
    }

    @AfterEach
    void stop() {
        if (poster != null) {
            poster.close();
        }
        if (server != null) {
            server.close(CloseMode.IMMEDIATE);
        }
        if (http11Server != null) {
            http11Server.stop(0);
        }
    }

    @Test
    void anEndpointThatOffersHttp2OverTlsIsPostedToByHttp2() throws Exception {
        String url = receiver(URIScheme.HTTPS, HttpVersionPolicy.NEGOTIATE, 0);
        poster = posterTrusting(clientTls);

        WebhookPoster.Answer answer = post(url, "{\"id\":\"e1\"}");

        assertThat(answer.status()).isEqualTo(204);
        assertThat(answer.error()).isNull();
        assertThat(answer.protocol()).isEqualTo("2");
        assertThat(protocols).containsExactly("HTTP/2.0");
        // the body and the signature arrive as sent
        assertThat(bodies).containsExactly("{\"id\":\"e1\"}");
        assertThat(signatures).containsExactly("v1,abc");
    }

    @Test
    void anEndpointThatOffersOnlyHttp11OverTlsIsPostedToByHttp11() throws Exception {
        String url = http11OnlyReceiver();
        poster = posterTrusting(clientTls);

        WebhookPoster.Answer answer = post(url, "{\"id\":\"e1\"}");

        assertThat(answer.status()).as(String.valueOf(answer.error())).isEqualTo(204);
        assertThat(answer.protocol()).isEqualTo("1.1");
        assertThat(protocols).containsExactly("HTTP/1.1");
        assertThat(bodies).containsExactly("{\"id\":\"e1\"}");
    }

    @Test
    void plainHttpIsHttp11EvenWhereTheEndpointCouldSpeakHttp2() throws Exception {
        // no ALPN without TLS, and a webhook does not guess that an endpoint takes HTTP/2 with prior knowledge
        String url = receiver(URIScheme.HTTP, HttpVersionPolicy.NEGOTIATE, 0);
        poster = posterTrusting(clientTls);

        WebhookPoster.Answer answer = post(url, "{}");

        assertThat(answer.status()).isEqualTo(204);
        assertThat(answer.protocol()).isEqualTo("1.1");
        assertThat(protocols).containsExactly("HTTP/1.1");
    }

    @Test
    void consecutiveRequestsOverHttp2ReuseTheirConnection() throws Exception {
        assertFivePostsShareOneConnection(receiver(URIScheme.HTTPS, HttpVersionPolicy.NEGOTIATE, 0), "HTTP/2.0");
    }

    @Test
    void consecutiveRequestsOverHttp11ReuseTheirConnection() throws Exception {
        assertFivePostsShareOneConnection(http11OnlyReceiver(), "HTTP/1.1");
    }

    private void assertFivePostsShareOneConnection(String url, String protocol) {
        poster = posterTrusting(clientTls);

        for (int i = 0; i < 5; i++) {
            assertThat(post(url, "{\"n\":" + i + "}").status()).isEqualTo(204);
        }

        assertThat(protocols).hasSize(5).containsOnly(protocol);
        assertThat(peers).as("the client ends of the connections used").hasSize(1);
    }

    @Test
    void anHttp2AnswerLongerThanTheCapIsCutOffWithItsStatusKept() throws Exception {
        String url = receiver(URIScheme.HTTPS, HttpVersionPolicy.NEGOTIATE, 1L << 30);
        poster = posterTrusting(clientTls);

        WebhookPoster.Answer answer = post(url, "{}");

        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.protocol()).isEqualTo("2");
        // the stream was reset after the cap: HTTP/2's flow control held the receiver to little more than that
        assertThat(bodyBytesSent.get()).isLessThan(16L << 20);
    }

    @Test
    void aCertificateNobodyVouchesForIsAFailedAttempt() throws Exception {
        String url = receiver(URIScheme.HTTPS, HttpVersionPolicy.NEGOTIATE, 0);
        poster = posterTrusting(SSLContexts.createDefault()); // the JDK's authorities: they never signed this key

        WebhookPoster.Answer answer = post(url, "{}");

        assertThat(answer.status()).isNull();
        assertThat(answer.error()).containsIgnoringCase("SSL");
        assertThat(protocols).isEmpty();
    }

    private WebhookPoster posterTrusting(SSLContext tls) {
        return new WebhookPoster(Duration.ofMillis(2000), Duration.ofSeconds(5), new TargetGuard(true), 4, tls);
    }

    private WebhookPoster.Answer post(String url, String body) {
        return poster.send(url, Map.of("webhook-id", "msg_1", "webhook-timestamp", "1", "webhook-signature", "v1,abc"), body);
    }

    /**
     * A receiver offering the given protocols; it answers 204, or 200 with a body of {@code answerBytes} if that is
     * above 0.
     */
    private String receiver(URIScheme scheme, HttpVersionPolicy offered, long answerBytes) throws Exception {
        H2ServerBootstrap bootstrap = H2ServerBootstrap.bootstrap()
                .setVersionPolicy(offered)
                .setCanonicalHostName("127.0.0.1")
                .register("*", new Recording(answerBytes));
        if (scheme == URIScheme.HTTPS) {
            bootstrap.setTlsStrategy(new H2ServerTlsStrategy(serverTls));
        }
        server = bootstrap.create();
        server.start();
        InetSocketAddress bound = (InetSocketAddress) server
                .listen(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), scheme).get(10, TimeUnit.SECONDS).getAddress();
        return scheme.id + "://127.0.0.1:" + bound.getPort() + "/hook";
    }

    /** A TLS receiver that knows only HTTP/1.1 and no ALPN, as many do: the JDK's own HTTPS server. */
    private String http11OnlyReceiver() throws IOException {
        http11Server = com.sun.net.httpserver.HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http11Server.setHttpsConfigurator(new com.sun.net.httpserver.HttpsConfigurator(serverTls));
        http11Server.createContext("/", exchange -> {
            protocols.add(exchange.getProtocol());
            peers.add(String.valueOf(exchange.getRemoteAddress()));
            bodies.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            signatures.add(exchange.getRequestHeaders().getFirst("webhook-signature"));
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        http11Server.start();
        return "https://127.0.0.1:" + http11Server.getAddress().getPort() + "/hook";
    }

    private final class Recording implements AsyncServerRequestHandler<Message<HttpRequest, byte[]>> {
        private final long answerBytes;

        Recording(long answerBytes) {
            this.answerBytes = answerBytes;
        }

        @Override
        public AsyncRequestConsumer<Message<HttpRequest, byte[]>> prepare(HttpRequest request, EntityDetails entity, HttpContext context) {
            return new BasicRequestConsumer<>(entity == null ? null : new BasicAsyncEntityConsumer());
        }

        @Override
        public void handle(Message<HttpRequest, byte[]> message, ResponseTrigger trigger, HttpContext context)
                throws org.apache.hc.core5.http.HttpException, IOException {
            protocols.add(context.getProtocolVersion().format());
            peers.add(String.valueOf(org.apache.hc.core5.http.protocol.HttpCoreContext.cast(context).getEndpointDetails().getRemoteAddress()));
            bodies.add(message.getBody() == null ? "" : new String(message.getBody(), StandardCharsets.UTF_8));
            signatures.add(message.getHead().getFirstHeader("webhook-signature").getValue());
            if (answerBytes > 0) {
                trigger.submitResponse(AsyncResponseBuilder.create(200).setEntity(new Endless(answerBytes)).build(), context);
            } else {
                trigger.submitResponse(AsyncResponseBuilder.create(204).build(), context);
            }
        }
    }

    /** A body of the given length, written as fast as the reader takes it, counting what went out. */
    private final class Endless implements AsyncEntityProducer {
        private final long length;
        private final ByteBuffer chunk = ByteBuffer.allocate(16 * 1024);

        Endless(long length) {
            this.length = length;
        }

        @Override
        public int available() {
            return chunk.capacity();
        }

        @Override
        public void produce(DataStreamChannel channel) throws IOException {
            while (bodyBytesSent.get() < length) {
                chunk.clear();
                int written = channel.write(chunk);
                if (written == 0) {
                    return; // the reader's window is full: asked again when it opens
                }
                bodyBytesSent.addAndGet(written);
            }
            channel.endStream();
        }

        @Override
        public boolean isRepeatable() {
            return false;
        }

        @Override
        public void failed(Exception cause) {
            // the reader reset the stream: nothing to clean up
        }

        @Override
        public long getContentLength() {
            return length;
        }

        @Override
        public String getContentType() {
            return ContentType.APPLICATION_OCTET_STREAM.toString();
        }

        @Override
        public String getContentEncoding() {
            return null;
        }

        @Override
        public boolean isChunked() {
            return false;
        }

        @Override
        public Set<String> getTrailerNames() {
            return Set.of();
        }

        @Override
        public void releaseResources() {
        }
    }
}
