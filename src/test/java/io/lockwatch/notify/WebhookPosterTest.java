package io.lockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.GZIPOutputStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The webhook POST against receivers that misbehave on purpose, each a raw socket server on loopback: one that
 * trickles its answer, one that answers with a gzip bomb, one with a 1 GB body, one with huge headers. Each
 * attempt ends by its deadline, reads little, and says what happened. And the guard at connect time: the poster
 * connects only to the addresses its guard checked, whatever the name resolves to at registration.
 */
class WebhookPosterTest {

    static final Duration DEADLINE = Duration.ofMillis(1500);
    final WebhookPoster poster = new WebhookPoster(Duration.ofMillis(500), DEADLINE, new TargetGuard(true), 4);
    final AtomicLong written = new AtomicLong();
    final CompletableFuture<Long> finished = new CompletableFuture<>();
    ServerSocket server;

    @AfterEach
    void stop() throws IOException {
        server.close();
        poster.close();
    }

    /** A server that reads one request, then answers as {@code answer} writes. */
    private String serve(Answerer answer) throws IOException {
        server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Thread t = new Thread(() -> {
            try (Socket s = server.accept()) {
                readRequest(s.getInputStream());
                OutputStream out = s.getOutputStream();
                try {
                    answer.write(new CountingStream(out, written));
                } catch (IOException e) {
                    // the client hung up: what it read is what was written until then
                }
                finished.complete(written.get());
            } catch (IOException e) {
                finished.completeExceptionally(e);
            }
        }, "hostile-receiver");
        t.setDaemon(true);
        t.start();
        return "http://127.0.0.1:" + server.getLocalPort() + "/hook";
    }

    private WebhookPoster.Answer post(String url) {
        return poster.send(url, Map.of("webhook-id", "msg_1", "webhook-timestamp", "1", "webhook-signature", "v1,x"),
                "{\"type\":\"sensor.state_changed\"}");
    }

    @Test
    void aReceiverThatTricklesItsHeadersIsAFailedAttemptByTheDeadline() throws Exception {
        String url = serve(out -> {
            for (byte b : "HTTP/1.1 200 OK\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII)) {
                out.write(b);
                out.flush();
                pause(200);
            }
            for (int i = 0; i < 1000; i++) {
                out.write('a');
                out.flush();
                pause(200);
            }
        });

        WebhookPoster.Answer answer = post(url);

        assertThat(answer.status()).isNull();
        assertThat(answer.failure()).hasMessageContaining("timed out");
        // given up: the server's next writes find the connection gone
        assertThat(finished.get(10, TimeUnit.SECONDS)).isLessThan(1000);
    }

    @Test
    void everyAttemptGivenUpOnANewConnectionClosesItWhileTheHeadStillTrickles() throws Exception {
        // several attempts at once, each on a connection of its own made for it: where the exchange's cancel was
        // lost to the connect that finished beside it, the connection stayed leased for as long as the trickle
        int attempts = 8;
        server = new ServerSocket(0, attempts, InetAddress.getLoopbackAddress());
        java.util.List<CompletableFuture<Long>> hungUp = new java.util.ArrayList<>();
        for (int i = 0; i < attempts; i++) {
            hungUp.add(new CompletableFuture<>());
        }
        Thread acceptor = new Thread(() -> {
            for (CompletableFuture<Long> noticed : hungUp) {
                try {
                    Socket s = server.accept();
                    Thread t = new Thread(() -> trickleHeadUntilHungUp(s, noticed), "trickling-receiver");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    noticed.completeExceptionally(e);
                }
            }
        }, "acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
        String url = "http://127.0.0.1:" + server.getLocalPort() + "/hook";

        java.util.List<CompletableFuture<WebhookPoster.Answer>> answers = new java.util.ArrayList<>();
        java.util.concurrent.ExecutorService callers = java.util.concurrent.Executors.newFixedThreadPool(attempts);
        try (WebhookPoster quick = new WebhookPoster(Duration.ofMillis(500), Duration.ofMillis(300), new TargetGuard(true), attempts)) {
            for (int i = 0; i < attempts; i++) {
                answers.add(CompletableFuture.supplyAsync(() -> quick.send(url, Map.of("webhook-id", "msg_1"), "{}"), callers));
            }
            for (CompletableFuture<WebhookPoster.Answer> answer : answers) {
                assertThat(answer.get(10, TimeUnit.SECONDS).failure()).hasMessageContaining("timed out");
            }
            // before the poster closes, which would close them all anyway
            for (CompletableFuture<Long> noticed : hungUp) {
                assertThat(noticed.get(10, TimeUnit.SECONDS)).as("bytes written before the hang-up").isLessThan(1000);
            }
        } finally {
            callers.shutdownNow();
        }
    }

    /** Reads a request, then writes a head a byte every 50 ms, never ending it; completes with the bytes written. */
    private static void trickleHeadUntilHungUp(Socket s, CompletableFuture<Long> noticed) {
        long sent = 0;
        try (s) {
            readRequest(s.getInputStream());
            OutputStream out = s.getOutputStream();
            out.write("HTTP/1.1 200 OK\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
            for (; sent < 100_000; sent++) {
                out.write('a');
                out.flush();
                pause(50);
            }
        } catch (IOException e) {
            // the client hung up
        }
        noticed.complete(sent);
    }

    @Test
    void aReceiverThatAnswersThenTricklesItsBodyHasAnsweredByTheDeadline() throws Exception {
        WebhookPoster.Answer answer = post(serve(tricklingBodyAfter("200 OK")));

        // the status is the answer; the attempt does not run past its deadline for the rest
        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.failure()).isNull();
        assertThat(finished.get(10, TimeUnit.SECONDS)).isLessThan(100_000);
    }

    @Test
    void anErrorWhoseBodyTricklesEndsItsConnectionByTheDeadline() throws Exception {
        // the client's own cancel is not heard once the head of a 4xx or 5xx is in: the poster's deadline is
        WebhookPoster.Answer answer = post(serve(tricklingBodyAfter("503 Service Unavailable")));

        assertThat(answer.status()).isEqualTo(503);
        assertThat(finished.get(10, TimeUnit.SECONDS)).isLessThan(100_000);
    }

    /** An answer with the given status whose 100,000-byte body comes a byte every 100 ms. */
    private static Answerer tricklingBodyAfter(String status) {
        return out -> {
            out.write(("HTTP/1.1 " + status + "\r\nContent-Length: 100000\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            for (int i = 0; i < 100_000; i++) {
                out.write('a');
                out.flush();
                pause(100);
            }
        };
    }

    @Test
    void aGzipBombIsNeitherDecompressedNorReadToItsEnd() throws Exception {
        ByteArrayOutputStream bomb = new ByteArrayOutputStream();
        try (GZIPOutputStream gzip = new GZIPOutputStream(bomb)) {
            byte[] zeros = new byte[1 << 20];
            for (int i = 0; i < 1024; i++) { // 1 GB inflated
                gzip.write(zeros);
            }
        }
        byte[] member = bomb.toByteArray();
        int members = 64; // concatenated gzip members: 64 MB sent, 64 GB inflated by a client that would
        long length = (long) member.length * members;
        String url = serve(out -> {
            out.write(("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Type: application/json\r\nContent-Length: "
                    + length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            for (int i = 0; i < members; i++) {
                out.write(member);
            }
        });

        WebhookPoster.Answer answer = post(url);

        assertThat(answer.status()).isEqualTo(200);
        // the client stopped after its cap; what the server got rid of beyond that sat in socket buffers
        assertThat(finished.get(10, TimeUnit.SECONDS)).isLessThan(length / 4);
    }

    @Test
    void aOneGigabyteAnswerIsReadOnlyUpToTheCap() throws Exception {
        long size = 1L << 30;
        String url = serve(out -> {
            out.write(("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\nContent-Length: " + size + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[65536];
            for (long sent = 0; sent < size; sent += chunk.length) {
                out.write(chunk);
            }
        });

        WebhookPoster.Answer answer = post(url);

        assertThat(answer.status()).isEqualTo(503);
        assertThat(answer.retryAfter()).isEqualTo("7");
        assertThat(finished.get(10, TimeUnit.SECONDS)).isLessThan(64L << 20);
    }

    @Test
    void hugeHeadersAreRefusedNotBuffered() throws Exception {
        String url = serve(out -> {
            out.write("HTTP/1.1 200 OK\r\n".getBytes(StandardCharsets.US_ASCII));
            byte[] line = ("X-Filler: " + "a".repeat(8000) + "\r\n").getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < 1000; i++) { // 8 MB of headers
                out.write(line);
            }
            out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        });

        WebhookPoster.Answer answer = post(url);

        assertThat(answer.status()).isNull();
        assertThat(answer.failure()).isNotNull();
        // the client stopped reading at its limit: the server is left with most of its 8 MB unsent
        assertThat(written.get()).isLessThan(8_000_000);
    }

    @Test
    void aRedirectIsNotFollowed() throws Exception {
        String url = serve(out -> out.write(
                "HTTP/1.1 307 Temporary Redirect\r\nLocation: http://169.254.169.254/\r\nContent-Length: 0\r\n\r\n"
                        .getBytes(StandardCharsets.US_ASCII)));

        assertThat(post(url).status()).isEqualTo(307);
    }

    @Test
    void aNameThatIsPublicAtRegistrationAndLoopbackAtDeliveryIsNeverConnectedTo() throws Exception {
        String local = serve(out -> out.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
        // DNS rebinding: the first answer public, every later one loopback, where the receiver listens
        AtomicInteger lookups = new AtomicInteger();
        TargetGuard guard = new TargetGuard(false, host -> new InetAddress[] {lookups.getAndIncrement() == 0
                ? InetAddress.getByAddress(host, new byte[] {93, (byte) 184, (byte) 215, 14})
                : InetAddress.getByAddress(host, new byte[] {127, 0, 0, 1})});
        String url = local.replace("127.0.0.1", "rebinding.example");

        assertThat(guard.problemWith(url)).isNull();
        WebhookPoster.Answer answer;
        try (WebhookPoster guarded = new WebhookPoster(Duration.ofMillis(500), DEADLINE, guard, 4)) {
            answer = guarded.send(url, Map.of("webhook-id", "msg_1"), "{}");
        }

        assertThat(answer.status()).isNull();
        assertThat(answer.refusal()).isEqualTo("host rebinding.example resolves to a loopback address");
        assertThat(answer.error()).startsWith("target refused: host rebinding.example");
        assertThat(lookups).hasValue(2);
        assertThat(written).hasValue(0); // the receiver never answered anything: nobody asked
    }

    @Test
    void thePosterConnectsToTheAddressItsGuardResolved() throws Exception {
        String local = serve(out -> out.write("HTTP/1.1 204 No Content\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
        // a name no DNS knows: only the guard's resolver can make it the receiver's address
        TargetGuard guard = new TargetGuard(true, host -> new InetAddress[] {InetAddress.getByAddress(host, new byte[] {127, 0, 0, 1})});

        WebhookPoster.Answer answer;
        try (WebhookPoster guarded = new WebhookPoster(Duration.ofMillis(500), DEADLINE, guard, 4)) {
            answer = guarded.send(local.replace("127.0.0.1", "receiver.invalid"), Map.of("webhook-id", "msg_1"), "{}");
        }

        assertThat(answer.status()).isEqualTo(204);
        assertThat(answer.error()).isNull();
    }

    @Test
    void aKeptAliveConnectionTheEndpointClosedUnansweredIsSentAgainOnceOnANewOne() throws Exception {
        server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        AtomicInteger requests = new AtomicInteger();
        Thread receiver = new Thread(() -> {
            try {
                try (Socket first = server.accept()) {
                    readRequest(first.getInputStream());
                    requests.incrementAndGet();
                    first.getOutputStream().write("HTTP/1.1 204 No Content\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    first.getOutputStream().flush();
                    // the client keeps the connection and sends its next request on it: closed unanswered, as an
                    // endpoint that has just timed the connection out does
                    readRequest(first.getInputStream());
                    requests.incrementAndGet();
                }
                try (Socket second = server.accept()) {
                    readRequest(second.getInputStream());
                    requests.incrementAndGet();
                    second.getOutputStream().write("HTTP/1.1 204 No Content\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    second.getOutputStream().flush();
                    readRequest(second.getInputStream()); // until the client hangs up
                }
            } catch (IOException e) {
                // the test ended
            }
        }, "closing-receiver");
        receiver.setDaemon(true);
        receiver.start();
        String url = "http://127.0.0.1:" + server.getLocalPort() + "/hook";

        assertThat(post(url).status()).isEqualTo(204);
        WebhookPoster.Answer answer = post(url);

        assertThat(answer.status()).as(String.valueOf(answer.error())).isEqualTo(204);
        assertThat(requests).hasValue(3);
    }

    @Test
    void aRequestTheAttemptGaveUpOnIsNotSentAgainWhenItsConnectionCloses() throws Exception {
        server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        AtomicInteger requests = new AtomicInteger();
        CompletableFuture<Boolean> sentAgain = new CompletableFuture<>();
        Thread receiver = new Thread(() -> {
            try {
                try (Socket hung = server.accept()) {
                    readRequest(hung.getInputStream());
                    requests.incrementAndGet();
                    // no answer: the poster gives up at its deadline and closes (or resets) the connection
                    try {
                        while (hung.getInputStream().read() >= 0) {
                            // until it does
                        }
                    } catch (IOException reset) {
                        // closed at once, with a reset
                    }
                }
                // a resend would come at once, as the connection closes; a second is more than enough to see one
                server.setSoTimeout(1000);
                try (Socket again = server.accept()) {
                    sentAgain.complete(true);
                } catch (java.net.SocketTimeoutException e) {
                    sentAgain.complete(false);
                }
            } catch (IOException e) {
                sentAgain.completeExceptionally(e);
            }
        }, "hanging-receiver");
        receiver.setDaemon(true);
        receiver.start();

        WebhookPoster.Answer answer = post("http://127.0.0.1:" + server.getLocalPort() + "/hook");

        assertThat(answer.failure()).hasMessageContaining("timed out");
        assertThat(sentAgain.get(10, TimeUnit.SECONDS)).as("sent again after the attempt gave up").isFalse();
        assertThat(requests).hasValue(1);
    }

    @Test
    void anEndpointThatClosesEveryConnectionUnansweredIsSentTheRequestTwiceAtMost() throws Exception {
        server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        AtomicInteger requests = new AtomicInteger();
        Thread receiver = new Thread(() -> {
            try {
                while (true) {
                    try (Socket s = server.accept()) {
                        readRequest(s.getInputStream());
                        requests.incrementAndGet();
                    }
                }
            } catch (IOException e) {
                // the test ended
            }
        }, "closing-receiver");
        receiver.setDaemon(true);
        receiver.start();

        WebhookPoster.Answer answer = post("http://127.0.0.1:" + server.getLocalPort() + "/hook");

        assertThat(answer.status()).isNull();
        assertThat(answer.error()).contains("Connection");
        assertThat(requests).hasValue(2);
    }

    interface Answerer {
        void write(OutputStream out) throws IOException;
    }

    private static void readRequest(InputStream in) throws IOException {
        // headers, then the body by its Content-Length
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                return;
            }
            head.append((char) b);
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        if (m.find()) {
            in.readNBytes(Integer.parseInt(m.group(1)));
        }
    }

    private static void pause(long millis) throws IOException {
        try {
            Thread.sleep(millis); // the hostile receiver's own pace, not a wait in the test
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(e);
        }
    }

    private static final class CountingStream extends OutputStream {
        private final OutputStream out;
        private final AtomicLong count;

        CountingStream(OutputStream out, AtomicLong count) {
            this.out = out;
            this.count = count;
        }

        @Override
        public void write(int b) throws IOException {
            out.write(b);
            count.incrementAndGet();
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
            count.addAndGet(len);
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }
    }
}
