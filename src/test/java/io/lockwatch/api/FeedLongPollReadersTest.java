package io.lockwatch.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyInt;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import io.lockwatch.notify.Feed;
import io.lockwatch.notify.FeedWatch;
import io.lockwatch.selfservice.ClientKeys;
import org.junit.jupiter.api.Test;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * A watch's look that wakes many held long polls at once has their pages read a few at a time
 * ({@code lockwatch.feed.read-threads}), not all together on the container's threads: together they took every
 * database connection of the pool, and ingest and the webhooks waited. Every poll is still answered.
 */
class FeedLongPollReadersTest {

    @Test
    void manyWokenPollsAreReadAtMostReadThreadsAtATimeAndAllAnswered() throws Exception {
        List<Runnable> held = new ArrayList<>();
        FeedWatch watch = holding(held);
        Feed feed = mock(Feed.class);
        AtomicInteger reading = new AtomicInteger(), most = new AtomicInteger(), read = new AtomicInteger();
        CountDownLatch go = new CountDownLatch(1);
        when(feed.read(any(), anyString(), anyInt())).thenAnswer(call -> {
            most.accumulateAndGet(reading.incrementAndGet(), Math::max);
            go.await(); // the database is slow: every woken read that could start has started
            reading.decrementAndGet();
            read.incrementAndGet();
            return new Feed.Page(List.of(Map.of("event_id", 1)), "next", false);
        });
        HeldReads reads = new HeldReads(watch, feed, 2);
        FeedLongPoll filter = new FeedLongPoll(reads);
        try {
            List<MockHttpServletResponse> responses = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                responses.add(poll(filter, true));
            }

            held.forEach(Runnable::run); // one look wakes all twenty

            await().atMost(Duration.ofSeconds(10)).until(() -> reading.get() == 2);
            // the other eighteen wait their turn, not a connection
            await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> reading.get() == 2);
            go.countDown();
            await().atMost(Duration.ofSeconds(10)).until(() -> read.get() == 20);
            assertThat(most.get()).isEqualTo(2);
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(responses)
                    .allSatisfy(r -> assertThat(r.getContentAsString()).contains("\"next_cursor\":\"next\"")));
        } finally {
            reads.close();
        }
    }

    /**
     * When the service stops, every held read is answered at once with its page, and a read that comes after is not
     * held but goes on to its route, which answers without waiting: the web server's graceful shutdown has nothing
     * left to wait for.
     */
    @Test
    void stoppingAnswersEveryHeldReadAndHoldsNoMore() throws Exception {
        List<Runnable> held = new ArrayList<>();
        FeedWatch watch = holding(held);
        Feed feed = mock(Feed.class);
        when(feed.read(any(), anyString(), anyInt())).thenReturn(new Feed.Page(List.of(), "same", false));
        HeldReads reads = new HeldReads(watch, feed, 2);
        FeedLongPoll filter = new FeedLongPoll(reads);
        try {
            List<MockHttpServletResponse> responses = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                responses.add(poll(filter, true));
            }

            reads.endAll();

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(responses)
                    .allSatisfy(r -> assertThat(r.getContentAsString()).contains("\"next_cursor\":\"same\"")));
            poll(filter, false);
        } finally {
            reads.close();
        }
    }

    /**
     * A read that passed the check for a stopping service just before it began to stop, and was registered with the
     * watch after the held ones were taken, is answered at once too, not at the end of its 30 s wait.
     */
    @Test
    void aReadHeldWhileTheServiceBeginsToStopIsAnsweredAtOnce() throws Exception {
        List<Runnable> held = new ArrayList<>();
        FeedWatch watch = holding(held);
        Feed feed = mock(Feed.class);
        when(feed.read(any(), anyString(), anyInt())).thenReturn(new Feed.Page(List.of(), "same", false));
        HeldReads reads = new HeldReads(watch, feed, 2);
        FeedLongPoll filter = new FeedLongPoll(reads);
        org.mockito.Mockito.doAnswer(call -> {
            reads.endAll(); // the service stops between the filter's check and this registration
            synchronized (held) {
                held.add(call.getArgument(2));
            }
            return true;
        }).when(watch).holdIfNothingNew(any(), anyString(), any());
        try {
            MockHttpServletResponse response = poll(filter, true);

            await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
                    assertThat(response.getContentAsString()).contains("\"next_cursor\":\"same\""));
        } finally {
            reads.close();
        }
    }

    /** A watch that holds every poll, keeping its wake-up in {@code held}, and gives them all up on release. */
    private static FeedWatch holding(List<Runnable> held) {
        FeedWatch watch = mock(FeedWatch.class);
        when(watch.holdIfNothingNew(any(), anyString(), any())).thenAnswer(call -> {
            synchronized (held) {
                held.add(call.getArgument(2));
            }
            return true;
        });
        when(watch.releaseAll()).thenAnswer(call -> {
            synchronized (held) {
                List<Runnable> all = new ArrayList<>(held);
                held.clear();
                return all;
            }
        });
        return watch;
    }

    /** A long poll of a client by its own key; whether the filter is to hold it or to pass it on to its route. */
    private static MockHttpServletResponse poll(FeedLongPoll filter, boolean held) throws Exception {
        UUID client = UUID.randomUUID();
        MockHttpServletResponse response = new MockHttpServletResponse();
        java.util.concurrent.atomic.AtomicBoolean suspended = new java.util.concurrent.atomic.AtomicBoolean();
        MockHttpServletRequest request = new MockHttpServletRequest("GET", "/api/v1/clients/" + client + "/feed") {
            @Override
            public jakarta.servlet.AsyncContext startAsync() {
                suspended.set(true);
                return startAsync(this, response); // as a container's does: the response it was given
            }
        };
        request.setAsyncSupported(true);
        request.setParameter("wait", "30");
        request.setParameter("after", "cursor");
        request.setAttribute(ClientKeys.REQUEST_ATTRIBUTE, new ClientKeys.Holder(UUID.randomUUID(), client, "client-read"));
        MockFilterChain route = new MockFilterChain();
        filter.doFilter(request, response, route);
        // suspended, not "still suspended": a read answered at once (the service stopping) may be complete already
        assertThat(suspended.get()).as(held ? "held" : "not held").isEqualTo(held);
        assertThat(route.getRequest()).as(held ? "not passed on" : "passed on to its route").isEqualTo(held ? null : request);
        return response;
    }
}
