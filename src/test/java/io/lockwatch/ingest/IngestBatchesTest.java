package io.lockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.mockito.Mockito.mock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

import com.rabbitmq.client.Channel;
import org.apache.camel.CamelContext;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

/**
 * The gathering of messages into batches, without a broker: several consumers at once, a batch closed as the batch
 * thread frees, and one the timer closes. The batch close's rule itself is {@link IngestBatchCloseTest}'s.
 */
class IngestBatchesTest {

    /** Per applied batch, in the order applied: its highest delivery tag per channel, and its size. */
    final List<Map<Channel, Long>> appliedTags = new CopyOnWriteArrayList<>();
    final List<Integer> appliedSizes = new CopyOnWriteArrayList<>();
    final List<String> applyThreads = new CopyOnWriteArrayList<>();
    CamelContext camel;

    @AfterEach
    void stop() {
        if (camel != null) {
            camel.stop();
        }
    }

    IngestBatches started(int size, Duration interval, Duration maxWait) throws Exception {
        return started(size, interval, maxWait, batch -> { });
    }

    /** {@code during} runs on the batch thread as each batch is applied, after it is recorded. */
    IngestBatches started(int size, Duration interval, Duration maxWait, java.util.function.Consumer<IngestBatch> during)
            throws Exception {
        return started(size, interval, maxWait, during, r -> false);
    }

    IngestBatches started(int size, Duration interval, Duration maxWait, java.util.function.Consumer<IngestBatch> during,
                          java.util.function.Predicate<Reading> mayChangeState) throws Exception {
        camel = new DefaultCamelContext();
        IngestBatches batches = new IngestBatches(new IngestProperties("x", "q", "i", 1, 2000, size, interval, maxWait, 1,
                Duration.ofSeconds(3), Duration.ofSeconds(15), DataSize.ofKilobytes(4), DataSize.ofKilobytes(128),
                Duration.ofSeconds(5), DataSize.ofMegabytes(1), 1000), false, mayChangeState);
        batches.start(camel);
        batches.deliverTo(batch -> {
            applyThreads.add(Thread.currentThread().getName());
            appliedTags.add(new HashMap<>(batch.deliveries().lastTags()));
            appliedSizes.add(batch.size());
            during.accept(batch);
        });
        camel.start();
        return batches;
    }

    static void add(IngestBatches batches, Channel channel, long tag) {
        batches.add(new Reading("S" + tag % 100, (int) (tag % 2), 1_000 + tag, Reading.TimeSource.READING, 2_000 + tag, null),
                channel, tag);
    }

    @Test
    void withSeveralConsumersBatchesAreAppliedOneAtATimeInTheOrderTheyClosed() throws Exception {
        // small batches closing all the time from four consumers (one per partition queue): a batch queued after a
        // later one would show here as a channel's highest tag going down from one applied batch to the next, and
        // its multiple-ack would have covered the earlier batch's uncommitted deliveries
        IngestBatches batches = started(7, Duration.ofMillis(1), Duration.ofMillis(2));
        int consumers = 4, perConsumer = 20_000;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < consumers; c++) {
            Channel channel = mock(Channel.class);
            Thread t = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (long tag = 1; tag <= perConsumer; tag++) {
                    add(batches, channel, tag);
                }
            });
            t.start();
            threads.add(t);
        }
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            batches.closeIfDue();
            return appliedSizes.stream().mapToInt(Integer::intValue).sum() == consumers * perConsumer;
        });

        assertThat(appliedSizes).allSatisfy(n -> assertThat(n).isBetween(1, 7));
        assertThat(new java.util.HashSet<>(applyThreads)).singleElement().asString().contains(IngestBatches.THREAD_NAME);
        Map<Channel, Long> highest = new HashMap<>();
        for (Map<Channel, Long> tags : appliedTags) {
            tags.forEach((channel, tag) -> {
                assertThat(tag).isGreaterThan(highest.getOrDefault(channel, 0L));
                highest.put(channel, tag);
            });
        }
        assertThat(highest.values()).hasSize(consumers).containsOnly((long) perConsumer);
    }

    @Test
    void aReadingAloneIsAppliedAtOnceAndWhatArrivesDuringAnApplyGoesAsOneBatchTheMomentItEnds() throws Exception {
        // no timer asked (closeIfDue is never called here): the message closes its batch, and the batch thread
        // closes the next as it frees
        CountDownLatch applying = new CountDownLatch(1), release = new CountDownLatch(1);
        IngestBatches batches = started(1000, Duration.ZERO, Duration.ofSeconds(60), batch -> {
            if (appliedSizes.size() == 1) {
                applying.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        Channel channel = mock(Channel.class);
        add(batches, channel, 1);
        applying.await();
        assertThat(appliedSizes).as("the first reading, alone").containsExactly(1);
        for (long tag = 2; tag <= 50; tag++) {
            add(batches, channel, tag);
        }
        assertThat(appliedSizes).as("gathering while the thread is busy").containsExactly(1);
        release.countDown();
        await().atMost(Duration.ofSeconds(10)).until(() -> appliedSizes.size() == 2);
        assertThat(appliedSizes).containsExactly(1, 49);
        assertThat(appliedTags.get(1)).containsEntry(channel, 50L);
        assertThat(batches.isFree()).isTrue();
    }

    @Test
    void withAnIntervalSetABatchNoMessageClosesIsClosedByTheTimerOnceItIsDue() throws Exception {
        IngestBatches slow = started(1000, Duration.ofSeconds(30), Duration.ofSeconds(60));
        Channel channel = mock(Channel.class);
        for (long tag = 1; tag <= 3; tag++) {
            add(slow, channel, tag);
        }
        slow.closeIfDue();
        assertThat(appliedSizes).as("not due yet").isEmpty();
        assertThat(slow.isFree()).isTrue();
        stop();

        IngestBatches quick = started(1000, Duration.ofMillis(20), Duration.ofSeconds(60));
        for (long tag = 1; tag <= 3; tag++) {
            add(quick, channel, tag);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            quick.closeIfDue();
            return !appliedSizes.isEmpty();
        });
        assertThat(appliedSizes).containsExactly(3);
        assertThat(appliedTags.get(0)).containsEntry(channel, 3L);
    }

    @Test
    void aChangeClosesItsBatchAtOnceWhileRepeatsWaitForTheInterval() throws Exception {
        // readings of even tags repeat their sensor's state, odd ones change it; no timer is asked here
        IngestBatches batches = started(1000, Duration.ofSeconds(30), Duration.ofSeconds(60), batch -> { },
                r -> r.data() == 1);
        Channel channel = mock(Channel.class);
        add(batches, channel, 2);
        add(batches, channel, 4);
        assertThat(appliedSizes).as("repeats gather").isEmpty();
        add(batches, channel, 5);
        await().atMost(Duration.ofSeconds(10)).until(() -> appliedSizes.size() == 1);
        assertThat(appliedSizes).as("the change takes the repeats before it along").containsExactly(3);
        assertThat(appliedTags.get(0)).containsEntry(channel, 5L);
    }
}
