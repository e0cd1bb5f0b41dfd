package io.lockwatch.api;

import java.io.IOException;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
 * would find nothing, the request is suspended (servlet async) and waits in {@link HeldReads} until an event of the
 * client is recorded or {@code wait} seconds pass. A thread per waiting read would be a thread per pulling client;
 * platform-http answers on a small pool. (The feed listener, {@link FeedListener}, holds them for less.)
 *
 * <p>A held read is answered where it is held: the same feed read and the same JSON its route gives. Sent on
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

    private final HeldReads reads;

    FeedLongPoll(HeldReads reads) {
        this.reads = reads;
    }

    @Override
    public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain) throws IOException, ServletException {
        HttpServletRequest request = (HttpServletRequest) req;
        Matcher feed = FEED.matcher(request.getRequestURI().substring(request.getContextPath().length()));
        int wait = seconds(request.getParameter("wait"));
        int limit = limit(request.getParameter("limit"));
        if (reads.stopping() || request.getDispatcherType() != DispatcherType.REQUEST || !"GET".equals(request.getMethod())
                || !feed.matches() || wait == 0 || limit == 0 || !takesJson(request.getHeaders("Accept"))) {
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
        if (key instanceof ClientKeys.Holder holder ? !holder.clientId().equals(client) : !exists(client)) {
            chain.doFilter(req, res);
            return;
        }
        if (key instanceof ClientKeys.Holder holder) {
            // as ClientScope logs every request by a client's key: this one may never reach the route
            log.info("Client key {} of client {}: readClientFeed (held)", holder.keyId(), holder.clientId());
        }
        AsyncContext async = request.startAsync();
        async.setTimeout(TimeUnit.SECONDS.toMillis(wait + 30L)); // the held read ends it first
        reads.read(client, request.getParameter("after"), limit, wait, new HeldReads.Reply() {
            @Override
            public void page(byte[] json) {
                onTheContainer(() -> async.start(() -> write(async, json)));
            }

            /** A failure is the route's to answer, as it answers any. */
            @Override
            public void failed(RuntimeException e) {
                onTheContainer(async::dispatch);
            }
        });
    }

    /** An operator's long poll is held only for a client that exists; if that cannot be told now, the route answers. */
    private boolean exists(UUID client) {
        try {
            return reads.exists(client);
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Hands the request back to the container, unless it has ended meanwhile (its client gone): then nothing. */
    private static void onTheContainer(Runnable handOver) {
        try {
            handOver.run();
        } catch (IllegalStateException ended) {
            // the container already ended the request: there is no one to answer
        }
    }

    private static void write(AsyncContext async, byte[] body) {
        HttpServletResponse response = (HttpServletResponse) async.getResponse();
        try {
            response.setStatus(200);
            response.setContentType("application/json");
            response.setContentLength(body.length);
            response.getOutputStream().write(body);
        } catch (IOException e) {
            // the client went away: nothing to answer
        } finally {
            async.complete();
        }
    }

    /** The page's size asked, 100 if none; 0 for anything the contract will refuse. */
    static int limit(String limit) {
        if (limit == null) {
            return Json.DEFAULT_LIMIT;
        }
        if (limit.isEmpty() || limit.length() > 4 || !limit.chars().allMatch(Character::isDigit)) {
            return 0;
        }
        int n = Integer.parseInt(limit);
        return n >= 1 && n <= Json.MAX_LIMIT ? n : 0;
    }

    /** Whether the caller takes the answer's one media type (its Accept headers, none or empty if it said none). */
    static boolean takesJson(java.util.Enumeration<String> accepts) {
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
    static int seconds(String wait) {
        if (wait == null || wait.isEmpty() || wait.length() > 2 || !wait.chars().allMatch(Character::isDigit)) {
            return 0;
        }
        int n = Integer.parseInt(wait);
        return n <= 60 ? n : 0;
    }
}
