package io.lockwatch.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * CPU used between two calls, in cores, per group of processes on this machine, read from
 * {@code /proc/<pid>/stat} (utime + stime of all threads): the service, this harness, RabbitMQ
 * ({@code beam.smp}), PostgreSQL (every {@code postgres} process), ClickHouse, everything else, and the whole
 * machine from {@code /proc/stat}.
 */
final class CpuSampler {

    static final String SERVICE = "service";
    static final String HARNESS = "harness";
    static final String RABBITMQ = "rabbitmq";
    static final String POSTGRESQL = "postgresql";
    static final String CLICKHOUSE = "clickhouse";
    /** Clients pulling their feeds from a process of their own (--feed-pollers); shown only when there are some. */
    static final String PULLERS = "pullers";
    /** The instance without the pipeline that the pullers ask (--feed-instance). */
    static final String API_INSTANCE = "api-instance";
    /** A yardstick's CPU load beside the run (--cpu-load); shown only when there is one. */
    static final String LOAD = "load";
    static final String OTHER = "other";
    static final String MACHINE = "machine";

    private static final Path PROC = Path.of("/proc");

    /** The service's pids (one per instance); they change when a drill restarts an instance. */
    private final java.util.function.Supplier<java.util.Collection<Long>> servicePids;
    private final long selfPid = ProcessHandle.current().pid();
    /** Processes the harness started beside the run, counted as groups of their own. */
    private final Map<Long, String> ownGroups = new java.util.concurrent.ConcurrentHashMap<>();
    /** USER_HZ: the unit of the tick counts in /proc (getconf CLK_TCK; 100 on Linux). */
    private final double ticksPerSecond = Integer.getInteger("bench.clk_tck", 100);

    private Map<Long, Long> lastTicks = Map.of();
    /** CPU seconds used by the processes of the group "other", by command name, since the first sample. */
    private final Map<String, Double> otherSeconds = new HashMap<>();
    private long lastMachineBusy;
    private long lastNanos;

    CpuSampler(long servicePid) {
        this(() -> java.util.List.of(servicePid));
    }

    /** Follows the service's instances, whose pids change when a drill restarts one. */
    CpuSampler(java.util.function.Supplier<java.util.Collection<Long>> servicePids) {
        this.servicePids = servicePids;
    }

    /** Counts this process as a group of its own from now on ({@link #PULLERS}, {@link #LOAD}). */
    void group(String group, long pid) {
        ownGroups.put(pid, group);
    }

    /** Cores used per group since the previous call; empty on the first call. */
    synchronized Map<String, Double> sample() throws IOException {
        long now = System.nanoTime();
        Map<Long, Long> ticks = new HashMap<>();
        Map<Long, String> groups = new HashMap<>();
        Map<Long, String> commands = new HashMap<>();
        try (DirectoryStream<Path> pids = Files.newDirectoryStream(PROC, p -> isNumber(p.getFileName().toString()))) {
            for (Path dir : pids) {
                String stat;
                try {
                    stat = Files.readString(dir.resolve("stat"));
                } catch (IOException e) {
                    continue; // exited meanwhile
                }
                long pid = Long.parseLong(dir.getFileName().toString());
                int open = stat.indexOf('('), close = stat.lastIndexOf(')');
                String comm = stat.substring(open + 1, close);
                // fields after the command: state(3) ... utime(14) stime(15)
                String[] f = stat.substring(close + 2).split(" ");
                ticks.put(pid, Long.parseLong(f[11]) + Long.parseLong(f[12]));
                groups.put(pid, group(pid, comm));
                commands.put(pid, comm);
            }
        }
        long machineBusy = machineBusyTicks();

        Map<String, Double> cores = new LinkedHashMap<>();
        if (lastNanos != 0) {
            double seconds = (now - lastNanos) / 1e9;
            for (String g : new String[] {SERVICE, RABBITMQ, POSTGRESQL, HARNESS, CLICKHOUSE, OTHER}) {
                cores.put(g, 0.0);
            }
            ownGroups.values().forEach(g -> cores.put(g, 0.0));
            ticks.forEach((pid, t) -> {
                long delta = Math.max(0, t - lastTicks.getOrDefault(pid, 0L));
                cores.merge(groups.get(pid), delta / ticksPerSecond / seconds, Double::sum);
                if (delta > 0 && groups.get(pid).equals(OTHER)) {
                    otherSeconds.merge(commands.get(pid), delta / ticksPerSecond, Double::sum);
                }
            });
            cores.put(MACHINE, (machineBusy - lastMachineBusy) / ticksPerSecond / seconds);
        }
        lastTicks = ticks;
        lastMachineBusy = machineBusy;
        lastNanos = now;
        return cores;
    }

    /** The commands of the group "other" that used the most CPU since the first sample, in CPU seconds. */
    synchronized Map<String, Double> topOthers(int n) {
        Map<String, Double> top = new LinkedHashMap<>();
        otherSeconds.entrySet().stream()
                .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
                .limit(n)
                .forEach(e -> top.put(e.getKey(), e.getValue()));
        return top;
    }

    private String group(long pid, String comm) {
        if (servicePids.get().contains(pid)) {
            return SERVICE;
        }
        if (pid == selfPid) {
            return HARNESS;
        }
        String own = ownGroups.get(pid);
        if (own != null) {
            return own;
        }
        if (comm.equals("beam.smp")) {
            return RABBITMQ;
        }
        if (comm.startsWith("postgres")) {
            return POSTGRESQL;
        }
        if (comm.startsWith("clickhouse")) {
            return CLICKHOUSE;
        }
        return OTHER;
    }

    /** user + nice + system + irq + softirq + steal of all CPUs, from the first line of /proc/stat. */
    private static long machineBusyTicks() throws IOException {
        String line = Files.readAllLines(PROC.resolve("stat")).get(0);
        String[] f = line.trim().split("\\s+");
        long busy = 0;
        for (int i : new int[] {1, 2, 3, 6, 7, 8}) {
            busy += Long.parseLong(f[i]);
        }
        return busy;
    }

    private static boolean isNumber(String s) {
        if (s.isEmpty()) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            if (!Character.isDigit(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }
}
