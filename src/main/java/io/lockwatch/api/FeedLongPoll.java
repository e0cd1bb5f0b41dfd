package io.lockwatch.api;

import java.io.IOException;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

/**
 * The long poll of the pull feed ({@code GET /api/v1/clients/{id}/feed?wait=N}), held without a thread: when the read
 * would find nothing, the request is suspended (servlet async) and waits in {@link FeedWatch} until an event of the
 * client is recorded or {@code wait} seconds pass, then goes on, as it came, to its route, which reads the feed and
 * answers. A thread per waiting read would be a thread per pulling client; platform-http answers on a small pool.
 * Whether there is anything to read is, for a cursor of the watch's time, what the watch has noted; the database is
 * asked only of an older cursor.
 *
 * <p>After Spring Security (the caller is known), before the contract: anything that is not a plainly valid long poll
 * goes straight on, for the route and the contract to answer. A client's key asking for another client's feed goes
 * straight on too, to its 404: holding it would tell whether that client exists and has events.
 */
final class FeedLongPoll implements Filter {

    private static final Pattern FEED = Pattern.compile("/api/v1/clients/([0-9a-fA-F-]{36})/feed");

    private final FeedWatch watch;
    /**
     * Ends the held reads no event ends first. Its own, not a bean: an Executor bean would displace Spring Boot's
     * task executor, on which platform-http answers.
     */
    private final java.util.concurrent.ScheduledThreadPoolExecutor timer = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "feed-long-poll-timer");
        t.setDaemon(true);
        return t;
    });

    FeedLongPoll(FeedWatch watch) {
        this.watch = watch;
        // a read woken by its event takes its timeout out of the queue, and the request it holds with it
        timer.setRemoveOnCancelPolicy(true);
    }

    @Override
    public void destroy() {
        timer.shutdownNow();
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        Matcher feed = FEED.matcher(request.getRequestURI().substring(request.getContextPath().length()));
        int wait = seconds(request.getParameter("wait"));
        if (request.getDispatcherType() != DispatcherType.REQUEST || !"GET".equals(request.getMethod())
                || !feed.matches() || wait == 0) {
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
        AsyncContext async = request.startAsync();
        async.setTimeout(TimeUnit.SECONDS.toMillis(wait + 30L)); // the timer below ends it first
        Held held = new Held(client, async);
        // what the watch has seen decides, without the database, for a cursor of this instance's time
        if (watch.holdIfNothingNew(client, after, held)) {
            held.until(wait);
            return;
        }
        if (quietNow(client, after)) {
            watch.await(client, held);
            held.until(wait);
            // what was recorded while it was being registered
            if (!quietNow(client, after)) {
                held.run();
            }
            return;
        }
        held.run(); // something to read now: on to the route
    }

    /** A held read: goes on to its route once, woken by its client's event or at the end of its wait. */
    private final class Held implements Runnable {
        private final UUID client;
        private final AsyncContext async;
        private final AtomicBoolean goneOn = new AtomicBoolean();
        private volatile java.util.concurrent.Future<?> timeout;

        Held(UUID client, AsyncContext async) {
            this.client = client;
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
                async.dispatch();
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

    /** The seconds asked to wait, 1 to 60; 0 for none or anything the contract will refuse. */
    private static int seconds(String wait) {
        if (wait == null || wait.isEmpty() || wait.length() > 2 || !wait.chars().allMatch(Character::isDigit)) {
            return 0;
        }
        int n = Integer.parseInt(wait);
        return n <= 60 ? n : 0;
    }
}
