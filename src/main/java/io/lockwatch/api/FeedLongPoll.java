package io.lockwatch.api;

import java.io.IOException;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lockwatch.notify.Feed;
import io.lockwatch.notify.FeedWatch;
import io.lockwatch.selfservice.ClientKeys;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * The long poll of the pull feed ({@code GET /api/v1/clients/{id}/feed?wait=N}), held without a thread: when the read
 * would find nothing, the request is suspended (servlet async) and waits in {@link FeedWatch} until an event of the
 * client is recorded or {@code wait} seconds pass. A thread per waiting read would be a thread per pulling client;
 * platform-http answers on a small pool. Whether there is anything to read is, for a cursor of the watch's time, what
 * the watch has noted; the database is asked only of an older cursor.
 *
 * <p>A held read is answered where it is held: the same {@link Feed#read} and the same JSON its route gives. Sent on
 * to the route again (an async dispatch), it would pass Spring Security, Spring MVC, Camel and the contract a second
 * time: most of the cost of a pulling client, at one answer per event. Only a read whose every part the contract and
 * the route would take is held; if the read fails when woken (a database away), it goes on to its route after all,
 * which answers as it does any failure.
 *
 * <p>After Spring Security (the caller is known), before the contract: anything that is not a plainly valid long poll
 * goes straight on, for the route and the contract to answer. A client's key asking for another client's feed goes
 * straight on too, to its 404: holding it would tell whether that client exists and has events.
 */
final class FeedLongPoll implements Filter {

    private static final Pattern FEED = Pattern.compile("/api/v1/clients/([0-9a-fA-F-]{36})/feed");
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ClientScope.class);

    private final FeedWatch watch;
    private final Feed feed;
    /**
     * Ends the held reads no event ends first. Its own, not a bean: an Executor bean would displace Spring Boot's
     * task executor, on which platform-http answers.
     */
    private final java.util.concurrent.ScheduledThreadPoolExecutor timer = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "feed-long-poll-timer");
        t.setDaemon(true);
        return t;
    });

    /**
     * Reads the pages of the reads that go on, a few at a time. A watch's look wakes every client with a new event at
     * once: on the container's threads those reads took every database connection together, and ingest's batches
     * and the webhooks' claims waited behind them. The answer is written back on the container's threads, so that a
     * slow reader holds none of these.
     */
    private final java.util.concurrent.ThreadPoolExecutor readers;

    FeedLongPoll(FeedWatch watch, Feed feed, int readThreads) {
        this.watch = watch;
        this.feed = feed;
        java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
        this.readers = new java.util.concurrent.ThreadPoolExecutor(readThreads, readThreads, 0, TimeUnit.SECONDS,
                new java.util.concurrent.LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "feed-read-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        // a read woken by its event takes its timeout out of the queue, and the request it holds with it
        timer.setRemoveOnCancelPolicy(true);
    }

    private volatile boolean stopping;

    /**
     * The service is stopping: every held read is answered now with what there is, as at the end of its wait, and no
     * read is held from here on (the route answers at once). Held, they kept the web server's graceful shutdown
     * waiting its whole timeout (20 s), then ended in errors. Called before that shutdown begins.
     */
    void endHeldReads() {
        stopping = true;
        watch.releaseAll().forEach(Runnable::run);
    }

    @Override
    public void destroy() {
        timer.shutdownNow();
        readers.shutdownNow();
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        Matcher feed = FEED.matcher(request.getRequestURI().substring(request.getContextPath().length()));
        int wait = seconds(request.getParameter("wait"));
        int limit = limit(request.getParameter("limit"));
        if (stopping || request.getDispatcherType() != DispatcherType.REQUEST || !"GET".equals(request.getMethod())
                || !feed.matches() || wait == 0 || limit == 0 || !takesJson(request)) {
            chain.doFilter(req, res);
            return;
        }
        UUID client;
        try {
            client = UUID.fromString(feed.group(1));
        } catch (IllegalArgumentException e) {
            chain.doFilter(req, res);
            return;
        }
        Object key = request.getAttribute(ClientKeys.REQUEST_ATTRIBUTE);
        String after = request.getParameter("after");
        if (key instanceof ClientKeys.Holder holder ? !holder.clientId().equals(client) : !exists(client)) {
            chain.doFilter(req, res);
            return;
        }
        if (key instanceof ClientKeys.Holder holder) {
            // as ClientScope logs every request by a client's key: this one may never reach the route
            log.info("Client key {} of client {}: readClientFeed (held)", holder.keyId(), holder.clientId());
        }
        AsyncContext async = request.startAsync();
        async.setTimeout(TimeUnit.SECONDS.toMillis(wait + 30L)); // the timer below ends it first
        Held held = new Held(client, after, limit, async);
        // what the watch has seen decides, without the database, for a cursor of this instance's time
        if (watch.holdIfNothingNew(client, after, held)) {
            held.until(wait);
            answerIfStopping(held);
            return;
        }
        if (quietNow(client, after)) {
            watch.await(client, held);
            held.until(wait);
            // what was recorded while it was being registered
            if (!quietNow(client, after)) {
                held.run();
            }
            answerIfStopping(held);
            return;
        }
        held.run(); // something to read now
    }

    /**
     * A read that was being held while the service began to stop came after {@link #endHeldReads} took the others:
     * answered now, not at the end of its wait, which the graceful shutdown would wait for. A read is answered once.
     */
    private void answerIfStopping(Held held) {
        if (stopping) {
            held.run();
        }
    }

    /** A held read: answered once, woken by its client's event or at the end of its wait. */
    private final class Held implements Runnable {
        private final UUID client;
        private final String after;
        private final int limit;
        private final AsyncContext async;
        private final AtomicBoolean goneOn = new AtomicBoolean();
        private volatile java.util.concurrent.Future<?> timeout;

        Held(UUID client, String after, int limit, AsyncContext async) {
            this.client = client;
            this.after = after;
            this.limit = limit;
            this.async = async;
        }

        void until(int seconds) {
            timeout = timer.schedule(this, seconds, TimeUnit.SECONDS);
            if (goneOn.get()) {
                timeout.cancel(false); // woken before its timeout was set
            }
        }

        @Override
        public void run() {
            if (goneOn.compareAndSet(false, true)) {
                watch.cancel(client, this);
                java.util.concurrent.Future<?> t = timeout;
                if (t != null) {
                    t.cancel(false);
                }
                // neither the watch nor the timer waits for the database
                try {
                    readers.execute(this::answer);
                } catch (java.util.concurrent.RejectedExecutionException stopped) {
                    onTheContainer(async::dispatch); // the route answers, or the container ends it
                }
            }
        }

        /** The page its route would give, as its route would give it; a failure is the route's to answer. */
        private void answer() {
            byte[] body;
            try {
                body = Json.MAPPER.writeValueAsBytes(feed.read(client, after, limit));
            } catch (RuntimeException | java.io.IOException e) {
                onTheContainer(async::dispatch);
                return;
            }
            onTheContainer(() -> async.start(() -> write(body)));
        }

        /** Hands the request back to the container, unless it has ended meanwhile (its client gone): then nothing. */
        private void onTheContainer(Runnable handOver) {
            try {
                handOver.run();
            } catch (IllegalStateException ended) {
                // the container already ended the request: there is no one to answer
            }
        }

        private void write(byte[] body) {
            HttpServletResponse response = (HttpServletResponse) async.getResponse();
            try {
                response.setStatus(200);
                response.setContentType("application/json");
                response.setContentLength(body.length);
                response.getOutputStream().write(body);
            } catch (java.io.IOException e) {
                // the client went away: nothing to answer
            } finally {
                async.complete();
            }
        }
    }

    /** An operator's long poll is held only for a client that exists (a client's key is its own client's). */
    private boolean exists(UUID client) {
        try {
            return watch.exists(client);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Nothing to read now (a database that is away: let the route answer its 503 at once). */
    private boolean quietNow(UUID client, String after) {
        try {
            return watch.nothingToRead(client, after);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** The page's size asked, 100 if none; 0 for anything the contract will refuse. */
    private static int limit(String limit) {
        if (limit == null) {
            return Json.DEFAULT_LIMIT;
        }
        if (limit.isEmpty() || limit.length() > 4 || !limit.chars().allMatch(Character::isDigit)) {
            return 0;
        }
        int n = Integer.parseInt(limit);
        return n <= Json.MAX_LIMIT ? n : 0;
    }


    /** Whether the caller takes the answer's one media type; else the route answers its 406. */
    private static boolean takesJson(HttpServletRequest request) {
        java.util.Enumeration<String> accepts = request.getHeaders("Accept");
        if (accepts == null || !accepts.hasMoreElements()) {
            return true;
        }
        while (accepts.hasMoreElements()) {
            for (String range : accepts.nextElement().split(",")) {
                String type = range.split(";", 2)[0].trim().toLowerCase(java.util.Locale.ROOT);
                if (type.equals("application/json") || type.equals("application/*") || type.equals("*/*")) {
                    return true;
                }
            }
        }
        return false;
    }

    /** The seconds asked to wait, 1 to 60; 0 for none or anything the contract will refuse. */
    private static int seconds(String wait) {
        if (wait == null || wait.isEmpty() || wait.length() > 2 || !wait.chars().allMatch(Character::isDigit)) {
            return 0;
        }
        int n = Integer.parseInt(wait);
        return n <= 60 ? n : 0;
    }
}
