package io.lockwatch.api;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lockwatch.notify.Feed;
import io.lockwatch.security.Bearers;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.dao.DataAccessException;
import org.springframework.security.authentication.AuthenticationServiceException;

/**
 * A port of its own for the pull feed's long polls ({@code lockwatch.feed.listener.port}): the one operation
 * {@code GET /api/v1/clients/{clientId}/feed}, with the same tokens and keys, parameters, answers and problems as on
 * the API's port, held in {@link HeldReads} like the API's.
 *
 * <p>Why a door of its own: on the web server, each long poll held a request's whole servlet state (about 100 KB of
 * live heap, which every garbage collection had to carry) and each answer passed the security chain, the observation
 * of HTTP requests and the container's dispatch, on threads that compete with the pipeline. Here a held poll is a
 * connection and a small object, parsed and answered on one event-loop thread; a thousand pulling clients are a
 * thousand idle sockets. Nothing else is served here: every other path is 404.
 *
 * <p>Each connection takes one request at a time (it reads the next only once the answer is written), so answers
 * keep the order of a pipelining client's requests. A connection with no request for {@code idle} is closed.
 */
final class FeedListener implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(FeedListener.class);
    private static final Logger access = LoggerFactory.getLogger(ClientScope.class);
    private static final Pattern FEED = Pattern.compile("/api/v1/clients/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
            + "[0-9a-fA-F]{4}-[0-9a-fA-F]{12})/feed");
    /** The contract's bound on a cursor. */
    private static final int CURSOR_MAX = 42;

    private final HeldReads reads;
    private final Bearers bearers;
    private final String address;
    private final int port;
    private final int idleSeconds;
    private final MeterRegistry meters;
    private NioEventLoopGroup boss;
    private NioEventLoopGroup loop;
    private Channel server;
    private volatile boolean running;

    /**
     * @param address where to listen (empty: every interface)
     * @param port    0 for any free one (tests)
     */
    FeedListener(HeldReads reads, Bearers bearers, String address, int port, int idleSeconds, MeterRegistry meters) {
        this.reads = reads;
        this.bearers = bearers;
        this.address = address;
        this.port = port;
        this.idleSeconds = idleSeconds;
        this.meters = meters;
    }

    @Override
    public void start() {
        boss = new NioEventLoopGroup(1, new io.netty.util.concurrent.DefaultThreadFactory("feed-listener-accept", true));
        loop = new NioEventLoopGroup(1, new io.netty.util.concurrent.DefaultThreadFactory("feed-listener", true));
        ServerBootstrap bootstrap = new ServerBootstrap().group(boss, loop).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        // a GET has no body: anything beyond a small one is refused with 413 by the aggregator
                        ch.pipeline().addLast(new IdleStateHandler(0, 0, idleSeconds), new HttpServerCodec(4096, 8192, 8192),
                                new HttpObjectAggregator(8192), new Requests());
                    }
                });
        InetSocketAddress at = address == null || address.isBlank() ? new InetSocketAddress(port)
                : new InetSocketAddress(address, port);
        server = bootstrap.bind(at).syncUninterruptibly().channel();
        running = true;
        log.info("Feed listener on {}: GET /api/v1/clients/{{clientId}}/feed", server.localAddress());
    }

    /** The port it listens on, once started. */
    int port() {
        return ((InetSocketAddress) server.localAddress()).getPort();
    }

    /** After the held reads were answered ({@code heldFeedReadsEndOnStop}, a later phase): their answers go out first. */
    @Override
    public void stop() {
        running = false;
        if (server != null) {
            server.close().syncUninterruptibly();
        }
        if (loop != null) {
            // a quiet second: the held reads answered on stopping are written before the connections close
            loop.shutdownGracefully(1, 5, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
            boss.shutdownGracefully(0, 5, java.util.concurrent.TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return SmartLifecycle.DEFAULT_PHASE - 1; // stopped after the phase that ends the held reads
    }

    /**
     * One connection's requests, one at a time: a pipelining client's requests decoded from one read wait here, and
     * the connection is read on only when they are all answered.
     */
    private final class Requests extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final java.util.ArrayDeque<FullHttpRequest> queued = new java.util.ArrayDeque<>();
        private ChannelHandlerContext ctx;
        private boolean busy;
        /** Whether the request being answered is a HEAD: its answer is a GET's without the body. */
        private volatile boolean head;

        Requests() {
            super(false); // a queued request is released once taken
        }

        @Override
        public void handlerAdded(ChannelHandlerContext ctx) {
            this.ctx = ctx;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            queued.add(request);
            ctx.channel().config().setAutoRead(false);
            if (!busy) {
                next();
            }
        }

        /** The next request queued, or reading on if there is none. On the connection's event loop. */
        void next() {
            FullHttpRequest request = queued.poll();
            busy = request != null;
            if (request == null) {
                ctx.channel().config().setAutoRead(true);
                return;
            }
            head = HttpMethod.HEAD.equals(request.method());
            try {
                take(request);
            } finally {
                request.release();
            }
        }

        private void take(FullHttpRequest request) {
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            if (!request.decoderResult().isSuccess()) {
                answer(this, false, problem(400, "Bad Request", "the request is not valid HTTP", null));
                return;
            }
            String uri = request.uri();
            int query = uri.indexOf('?');
            Matcher feed = FEED.matcher(query < 0 ? uri : uri.substring(0, query));
            if (!feed.matches()) {
                answer(this, keepAlive, problem(404, "Not Found",
                        "this port serves only GET /api/v1/clients/{clientId}/feed; the API is on the service's own port", null));
                return;
            }
            boolean head = HttpMethod.HEAD.equals(request.method());
            if (!HttpMethod.GET.equals(request.method()) && !head) {
                FullHttpResponse refused = problem(405, "Method Not Allowed", "the feed is read with GET (or HEAD)", null);
                refused.headers().set(HttpHeaderNames.ALLOW, "GET, HEAD");
                answer(this, keepAlive, refused);
                return;
            }
            UUID client = UUID.fromString(feed.group(1));
            Map<String, List<String>> params = new QueryStringDecoder(uri).parameters();
            String authorization = request.headers().get(HttpHeaderNames.AUTHORIZATION);
            List<String> accepts = request.headers().getAll(HttpHeaderNames.ACCEPT);
            try {
                Requests connection = this;
                reads.offTheDoorsThreads(() -> read(connection, keepAlive, head, client, params, authorization, accepts));
            } catch (java.util.concurrent.RejectedExecutionException stopping) {
                answer(this, false, unavailable("the service is stopping"));
            }
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
            if (event instanceof IdleStateEvent && !busy) {
                ctx.close(); // no request for a while, and none held
            } else {
                super.userEventTriggered(ctx, event);
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            queued.forEach(FullHttpRequest::release);
            queued.clear();
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close(); // a connection reset, mostly: nobody to answer
        }
    }

    /** Who asks, for which client, with what: checked as the API checks them, then held or read. */
    private void read(Requests connection, boolean keepAlive, boolean head, UUID client, Map<String, List<String>> params,
                      String authorization, List<String> accepts) {
        Bearers.Bearer caller;
        try {
            caller = bearers.who(authorization);
        } catch (AuthenticationServiceException e) {
            answer(connection, keepAlive, unavailable("the key cannot be checked now; try again shortly"));
            return;
        }
        if (caller == null) {
            FullHttpResponse refused = problem(401, "Unauthorized", "a valid bearer token is required", null);
            refused.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"lockwatch\"");
            answer(connection, keepAlive, refused);
            return;
        }
        if (caller.clientKey() != null) {
            access.info("Client key {} of client {}: readClientFeed (feed listener)", caller.clientKey().keyId(),
                    caller.clientKey().clientId());
        }
        // another client's, or none: 404 alike, so that a key cannot probe for other clients' ids
        boolean theirs;
        try {
            theirs = caller.clientKey() != null ? caller.clientKey().clientId().equals(client) : reads.exists(client);
        } catch (RuntimeException e) {
            answer(connection, keepAlive, failure(e));
            return;
        }
        if (!theirs) {
            answer(connection, keepAlive, problem(404, "Not Found", "no such client: " + client, null));
            return;
        }
        String after = first(params, "after");
        String wait = first(params, "wait");
        String limit = first(params, "limit");
        int waitSeconds = wait == null ? 0 : FeedLongPoll.seconds(wait);
        int pageSize = FeedLongPoll.limit(limit);
        if (wait != null && waitSeconds == 0 && !wait.matches("0{1,2}")) {
            answer(connection, keepAlive, problem(400, "Bad Request", "wait must be a whole number of seconds from 0 to 60", "wait"));
        } else if (pageSize == 0) {
            answer(connection, keepAlive, problem(400, "Bad Request", "limit must be between 1 and " + Json.MAX_LIMIT, "limit"));
        } else if (after != null && (after.isEmpty() || after.length() > CURSOR_MAX)) {
            answer(connection, keepAlive, problem(400, "Bad Request", "invalid cursor", "after"));
        } else if (!FeedLongPoll.takesJson(java.util.Collections.enumeration(accepts))) {
            answer(connection, keepAlive, problem(406, "Not Acceptable", "the feed is application/json", null));
        } else {
            // a HEAD is answered at once: nothing would come of holding it
            reads.read(client, after, pageSize, head ? 0 : waitSeconds, new HeldReads.Reply() {
                @Override
                public void page(byte[] json) {
                    FullHttpResponse ok = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
                            Unpooled.wrappedBuffer(json));
                    ok.headers().set(HttpHeaderNames.CONTENT_TYPE, HttpHeaderValues.APPLICATION_JSON);
                    answer(connection, keepAlive, ok);
                }

                @Override
                public void failed(RuntimeException e) {
                    answer(connection, keepAlive, failure(e));
                }
            });
        }
    }

    /** A read that failed, answered as the API's route answers it. */
    private FullHttpResponse failure(RuntimeException e) {
        if (e instanceof Feed.BadCursor) {
            return problem(400, "Bad Request", e.getMessage(), "after");
        }
        if (e instanceof DataAccessException || e instanceof java.util.concurrent.RejectedExecutionException) {
            log.warn("Answering a feed read with 503: {}", e.toString());
            return unavailable("the database is not available right now; try again shortly");
        }
        String id = UUID.randomUUID().toString();
        log.error("Unexpected failure answering a feed read (correlation id {})", id, e);
        FullHttpResponse failed = problem(500, "Internal Server Error",
                "the service could not answer; the error is logged with correlation id " + id, null);
        failed.headers().set(CorrelationIds.HEADER, id);
        return failed;
    }

    private static FullHttpResponse unavailable(String detail) {
        FullHttpResponse away = problem(503, "Service Unavailable", detail, null);
        away.headers().set(HttpHeaderNames.RETRY_AFTER, "5");
        return away;
    }

    private static FullHttpResponse problem(int status, String title, String detail, String field) {
        FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status),
                Unpooled.wrappedBuffer(Problems.bytes(Problems.body(status, title, detail, field))));
        response.headers().set(HttpHeaderNames.CONTENT_TYPE, Problems.CONTENT_TYPE);
        return response;
    }

    /** Writes the answer on the connection's own thread, then takes its next request (or closes it). */
    private void answer(Requests connection, boolean keepAlive, FullHttpResponse full) {
        full.headers().set(HttpHeaderNames.CONTENT_LENGTH, full.content().readableBytes())
                .set(HttpHeaderNames.CACHE_CONTROL, "no-store").set("X-Content-Type-Options", "nosniff");
        FullHttpResponse response = full;
        if (connection.head) {
            // the GET's head, its Content-Length included, and no body (RFC 9110, 9.3.2)
            response = full.replace(Unpooled.EMPTY_BUFFER);
            full.release();
        }
        FullHttpResponse sent = response;
        Counter.builder("lockwatch.feed.listener.answers").description("Answers of the feed listener, by HTTP status")
                .tag("status", String.valueOf(response.status().code())).register(meters).increment();
        if (!keepAlive) {
            response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        }
        ChannelHandlerContext ctx = connection.ctx;
        try {
            ctx.executor().execute(() -> ctx.writeAndFlush(sent).addListener(keepAlive
                    ? (ChannelFutureListener) written -> connection.next()
                    : ChannelFutureListener.CLOSE));
        } catch (java.util.concurrent.RejectedExecutionException stopped) {
            sent.release(); // the listener has stopped: its connections are closed, nobody to answer
        }
    }

    private static String first(Map<String, List<String>> params, String name) {
        List<String> values = params.get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }
}
