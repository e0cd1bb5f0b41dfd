package io.lockwatch.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Once a second, on its own thread: how many messages have been consumed (by the probe: the raw consumer, or
 * the service's counter), how many published, the queue's depth, the service's heap, and the CPU of each
 * process group since the previous sample.
 */
final class Sampler implements AutoCloseable {

    /**
     * What is consumed so far, the service's heap in bytes (NaN when there is no service), and the readings
     * the service has written to history so far (-1 when not observed).
     */
    record Observation(long consumed, double heapBytes, long historyWritten) {
        Observation(long consumed, double heapBytes) {
            this(consumed, heapBytes, -1);
        }
    }

    interface Probe {
        Observation observe() throws Exception;
    }

    interface Depth {
        long depth() throws Exception;
    }

    /**
     * @param at         seconds since the sampler started (the middle of the probe's call)
     * @param queueReady messages ready in the queue, -1 if unknown
     * @param cpuCores   cores used per process group since the previous sample
     * @param historyWritten readings written to history so far, -1 if not observed
     */
    record Sample(double at, long consumed, long published, long queueReady, double heapBytes,
                  Map<String, Double> cpuCores, long historyWritten) {
    }

    private final Probe probe;
    private final LongSupplier published;
    private final Depth queue;
    private final CpuSampler cpu;
    private final List<Sample> samples = new ArrayList<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "bench-sampler");
        t.setDaemon(true);
        return t;
    });
    private long startNanos;
    private long startMillis;
    private String lastError;

    Sampler(Probe probe, LongSupplier published, Depth queue, CpuSampler cpu) {
        this.probe = probe;
        this.published = published;
        this.queue = queue;
        this.cpu = cpu;
    }

    /** Takes the first sample now, then one a second. */
    Sampler start() {
        startNanos = System.nanoTime();
        startMillis = System.currentTimeMillis();
        timer.scheduleAtFixedRate(this::sampleOnce, 0, 1, TimeUnit.SECONDS);
        return this;
    }

    /** The wall-clock time of the sampler's second 0, in epoch milliseconds. */
    long startMillis() {
        return startMillis;
    }

    double elapsedSeconds() {
        return (System.nanoTime() - startNanos) / 1e9;
    }

    private void sampleOnce() {
        try {
            double before = elapsedSeconds();
            Observation o = probe.observe();
            double at = (before + elapsedSeconds()) / 2;
            long pub = published.getAsLong();
            long depth = queue.depth();
            Map<String, Double> cores = cpu.sample();
            synchronized (samples) {
                samples.add(new Sample(at, o.consumed(), pub, depth, o.heapBytes(), cores, o.historyWritten()));
            }
        } catch (Exception e) {
            // a missed sample only widens the interval between its neighbours
            if (!e.toString().equals(lastError)) {
                System.err.println("[bench] sample failed: " + e);
                lastError = e.toString();
            }
        }
    }

    List<Sample> samples() {
        synchronized (samples) {
            return List.copyOf(samples);
        }
    }

    @Override
    public void close() throws InterruptedException {
        timer.shutdown();
        timer.awaitTermination(15, TimeUnit.SECONDS);
    }
}
