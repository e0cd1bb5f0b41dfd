package io.lockwatch.bench;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code --cpu-load C}: a process beside the timed run that keeps one thread busy for 2 ms, then idle, so that it
 * uses C cores in all, in bursts as request handling does. A yardstick: a figure taken with some work added to this
 * 2-core box (e.g. a thousand pulling clients) set against the same run with only as much CPU taken away. At the
 * normal priority, as the service's own threads have.
 */
final class CpuLoad implements AutoCloseable {

    private static final long BURST_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private final Process process;

    CpuLoad(double cores) throws java.io.IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        process = new ProcessBuilder(List.of(java, "-Xmx32m", "-XX:+UseSerialGC", "-cp",
                System.getProperty("java.class.path"), CpuLoad.class.getName(), String.valueOf(cores)))
                .redirectError(ProcessBuilder.Redirect.INHERIT).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    long pid() {
        return process.pid();
    }

    @Override
    public void close() {
        process.destroy();
    }

    /** {@code cores}: busy 2 ms, then idle for as long as makes that share of one core; ends when its parent does. */
    public static void main(String[] args) {
        double cores = Double.parseDouble(args[0]);
        long idle = (long) (BURST_NANOS * (1 - cores) / cores);
        ProcessHandle parent = ProcessHandle.current().parent().orElseThrow();
        long sink = 0;
        for (long round = 0; ; round++) {
            long until = System.nanoTime() + BURST_NANOS;
            while (System.nanoTime() < until) {
                sink += Long.numberOfTrailingZeros(sink + round) ^ round; // work the JIT cannot drop
            }
            java.util.concurrent.locks.LockSupport.parkNanos(idle);
            if ((round & 1023) == 0 && !parent.isAlive()) {
                System.exit(sink == 42 ? 1 : 0);
            }
        }
    }
}
