package io.lockwatch.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.ConnectionFactory;

/**
 * Benchmark of lockwatch's ingest hot path against the real RabbitMQ and PostgreSQL (run it with
 * {@code scripts/bench.sh}, which documents the options). It prints figures and asserts no timing.
 *
 * <ol>
 *   <li>starts the service ({@link ServiceProcess}) and waits until it is healthy (it migrates the schema);</li>
 *   <li>registers N sensors in a wiped database ({@link BenchDatabase}) and purges the service's queue;</li>
 *   <li>measures the raw ceiling: RabbitMQ alone with the same traffic ({@link RawCeiling});</li>
 *   <li>pre-seeds one reading per sensor and waits until the service has applied them all, so that the
 *       timed phase's changes are the requested fraction;</li>
 *   <li>publishes readings for the duration and samples, every second, the service's applied-readings counter,
 *       heap and CPU ({@link Sampler}); then waits until the queue is drained;</li>
 *   <li>compares {@code sensor_state} and {@code sensor_events} with the {@link Reference};</li>
 *   <li>prints a summary and writes the same figures to {@code target/bench/ingest-<timestamp>.json}.</li>
 * </ol>
 */
public final class PipelineBenchmark {

    static final String EXCHANGE = "lockwatch.readings";
    static final String QUEUE = "lockwatch.readings";
    private static final Duration STALL = Duration.ofSeconds(60);
    /** Cores used by unrelated processes above which the figures are flagged as disturbed. */
    private static final double OTHER_LOAD_WARNING = 0.25;
    /** Cores used by unrelated processes below which a second counts as quiet. */
    private static final double QUIET = 0.1;
    /** The code measured, as the calling script describes it (git commit, and whether the tree had changes). */
    private static final String REVISION = System.getProperty("bench.revision", "unknown");

    private final BenchOptions o;
    private final String stamp = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'"));

    private PipelineBenchmark(BenchOptions options) {
        this.o = options;
    }

    public static void main(String[] args) {
        BenchOptions options;
        try {
            options = BenchOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println(BenchOptions.USAGE);
            System.exit(2);
            return;
        }
        int rc;
        try {
            rc = new PipelineBenchmark(options).run();
        } catch (Exception e) {
            System.err.println("[bench] failed: " + e);
            e.printStackTrace();
            rc = 1;
        }
        System.exit(rc);
    }

    /** Results of the service run. */
    private record ServiceRun(double appliedPerSecond, double publishedPerSecond, long published, long applied,
                              double publishSeconds, double drainedSeconds, long backlogAtEnd, long lagAtEnd,
                              Map<String, Double> meanCpu, double maxHeapBytes, long changes,
                              List<Sampler.Sample> samples) {
    }

    private int run() throws Exception {
        Files.createDirectories(o.outDir());
        log("%,d sensors, %.1f%% changes, %d s per phase, rate %s, warm-up %d s, seed %d", o.sensors(),
                o.changes() * 100, o.duration(), o.rate() == 0 ? "as fast as possible" : fmt(o.rate()) + "/s",
                o.warmup(), o.seed());
        log("RabbitMQ %s, PostgreSQL %s", o.amqpUri().replaceAll("//[^@]*@", "//"), o.jdbcUrl());
        if (!o.serviceArgs().isEmpty()) {
            log("service arguments: %s", String.join(" ", o.serviceArgs()));
        }
        ConnectionFactory amqp = Broker.factory(o.amqpUri());
        BenchDatabase db = new BenchDatabase(o.jdbcUrl(), o.dbUser(), o.dbPassword());
        try (Broker broker = new Broker(amqp)) {
            AMQP.Queue.DeclareOk queue = broker.inspect(QUEUE);
            if (queue != null) {
                if (queue.getConsumerCount() > 0) {
                    throw new IllegalStateException(QUEUE + " already has " + queue.getConsumerCount()
                            + " consumer(s): another lockwatch runs against this broker; stop it first");
                }
                broker.purge(QUEUE); // a leftover backlog must not reach the sensors registered below
            }
            Path serviceLog = o.outDir().resolve("service.log");
            // --diagnostics: Java Flight Recorder from the start (attaching it mid-run deoptimises the service's
            // compiled code and slowed it down several times over for most of the run)
            Path recording = o.outDir().toAbsolutePath().resolve("service-" + stamp + ".jfr");
            List<String> jvmOptions = o.diagnostics()
                    ? List.of("-XX:StartFlightRecording=settings=default,dumponexit=true,filename=" + recording)
                    : List.of();
            ServiceProcess service = ServiceProcess.start(o.jar(), jvmOptions, o.serviceArguments(), serviceLog,
                    o.outDir().resolve("service.pid"));
            if (o.diagnostics()) {
                log("the service records itself with Java Flight Recorder to %s (written when it stops)", recording);
            }
            Thread hook = new Thread(service::close, "bench-stop-service");
            Runtime.getRuntime().addShutdownHook(hook);
            log("service started (pid %d, %s, log %s)", service.pid(), service.baseUri(), serviceLog);
            try {
                return measure(service, broker, amqp, db);
            } finally {
                log("stopping the service (SIGTERM)");
                service.close();
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException e) {
                    // shutting down already
                }
            }
        }
    }

    private int measure(ServiceProcess service, Broker broker, ConnectionFactory amqp, BenchDatabase db)
            throws Exception {
        long t0 = System.nanoTime();
        service.awaitHealthy(Duration.ofMinutes(3));
        log("service healthy after %.1f s", (System.nanoTime() - t0) / 1e9);
        AMQP.Queue.DeclareOk queue = broker.inspect(QUEUE);
        if (queue == null || queue.getConsumerCount() != 1) {
            throw new IllegalStateException("expected the service as the one consumer of " + QUEUE + ", found "
                    + (queue == null ? "no queue" : queue.getConsumerCount() + " consumers"));
        }

        log("registering %,d sensors (TRUNCATE sensors, sensor_events CASCADE; one INSERT ... SELECT)", o.sensors());
        long rows = db.registerSensors(o.sensors());
        if (rows != o.sensors()) {
            throw new IllegalStateException("sensor_state has " + rows + " rows after registering " + o.sensors());
        }
        broker.purge(QUEUE);

        PrometheusScraper prometheus = new PrometheusScraper(service.baseUri());
        CpuSampler cpu = new CpuSampler(service.pid());
        Duration duration = Duration.ofSeconds(o.duration());

        log("raw ceiling: publishing to a temporary queue for %d s", o.duration());
        ReadingSource ceilingSource = new ReadingSource(new Reference(o.sensors()), o.changes(), ~o.seed());
        RawCeiling.Result ceiling = new RawCeiling(amqp, broker, cpu).run(ceilingSource, duration, o.warmup(),
                o.confirmWindow());
        log("raw ceiling: %s msg/s consumed, %s msg/s published (medians)", fmt(ceiling.consumedPerSecond()),
                fmt(ceiling.publishedPerSecond()));

        Reference reference = new Reference(o.sensors());
        ReadingSource source = new ReadingSource(reference, o.changes(), o.seed());
        double seedSeconds;
        ServiceRun run;
        try (Publisher publisher = new Publisher(amqp, EXCHANGE, "lockwatch-bench-publisher", o.confirmWindow())) {
            seedSeconds = preSeed(publisher, source, prometheus, service);
            run = timedRun(publisher, source, prometheus, broker, cpu, service, db);
        }

        AMQP.Queue.DeclareOk after = broker.inspect(QUEUE);
        if (after == null || after.getConsumerCount() != 1) {
            log("WARNING: %s has %s consumers now: something else consumed readings during the run",
                    QUEUE, after == null ? "no queue and no" : String.valueOf(after.getConsumerCount()));
        }
        log("checking sensor_state and sensor_events against the reference");
        Reference.Verdict verdict = reference.verify(db);
        PrometheusScraper.Metrics end = prometheus.scrape();
        Map<String, Long> counters = new LinkedHashMap<>();
        counters.put("received", (long) end.sum(PrometheusScraper.RECEIVED));
        counters.put("state_changes", (long) end.sum(PrometheusScraper.CHANGES));
        counters.put("unknown_sensor", (long) end.sum(PrometheusScraper.UNKNOWN));
        counters.put("stale", (long) end.sum(PrometheusScraper.STALE));
        counters.put("duplicate", (long) end.sum(PrometheusScraper.DUPLICATE));
        counters.put("invalid", (long) end.sum(PrometheusScraper.INVALID));

        report(ceiling, run, seedSeconds, verdict, counters, cpu.topOthers(5));
        return verdict.ok() ? 0 : 1;
    }

    /** One reading per sensor, in random order; returns once the service has applied them all. */
    private double preSeed(Publisher publisher, ReadingSource source, PrometheusScraper prometheus,
                           ServiceProcess service) throws Exception {
        log("pre-seeding: one reading per sensor");
        long start = System.nanoTime();
        double base = prometheus.scrape().sum(PrometheusScraper.RECEIVED);
        for (int sensor : source.shuffledSensors()) {
            publisher.publish(source.first(sensor));
        }
        publisher.awaitConfirms();
        double applied = awaitApplied(prometheus, base + o.sensors(), service);
        if (applied < base + o.sensors()) {
            throw new IllegalStateException("the service applied only " + (long) (applied - base) + " of the "
                    + o.sensors() + " seed readings");
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        log("pre-seeded in %.1f s", seconds);
        return seconds;
    }

    private ServiceRun timedRun(Publisher publisher, ReadingSource source, PrometheusScraper prometheus,
                                Broker broker, CpuSampler cpu, ServiceProcess service, BenchDatabase db)
            throws Exception {
        Reference reference = source.reference();
        long changesBefore = reference.totalChanges();
        long publishedBefore = publisher.published();
        double appliedBefore = prometheus.scrape().sum(PrometheusScraper.RECEIVED);
        log("service run: publishing to %s for %d s", EXCHANGE, o.duration());

        Sampler sampler = new Sampler(() -> {
            PrometheusScraper.Metrics m = prometheus.scrape();
            return new Sampler.Observation((long) m.sum(PrometheusScraper.RECEIVED),
                    m.sum(PrometheusScraper.JVM_MEMORY_USED, "area", "heap"));
        }, publisher::published, () -> broker.depth(QUEUE), cpu);
        ScheduledExecutorService diagnostics = Executors.newSingleThreadScheduledExecutor();
        if (o.diagnostics()) {
            diagnostics.schedule(() -> writeDiagnostics(service, db), o.duration() / 2, TimeUnit.SECONDS);
        }
        sampler.start();
        long published;
        double publishEnd, drainEnd, applied;
        long backlog, lag;
        try {
            published = publisher.publishFor(source::next, Duration.ofSeconds(o.duration()), o.rate());
            publishEnd = sampler.elapsedSeconds();
            backlog = broker.depth(QUEUE);
            lag = (long) (appliedBefore + published - prometheus.scrape().sum(PrometheusScraper.RECEIVED));
            log("published %,d readings in %.1f s; %,d ready in the queue, %,d not yet applied; draining",
                    published, publishEnd, backlog, lag);
            publisher.awaitConfirms();
            applied = awaitApplied(prometheus, appliedBefore + published, service);
            drainEnd = sampler.elapsedSeconds();
            Thread.sleep(2000); // does the counter stay put?
            applied = Math.max(applied, prometheus.scrape().sum(PrometheusScraper.RECEIVED));
        } finally {
            sampler.close();
            diagnostics.shutdownNow();
        }
        if (publisher.nacked() > 0) {
            log("WARNING: the broker nacked %,d messages", publisher.nacked());
        }
        List<Sampler.Sample> samples = sampler.samples();
        double from = o.warmup();
        return new ServiceRun(
                Stats.median(Stats.rates(samples, Sampler.Sample::consumed, from, publishEnd)),
                Stats.median(Stats.rates(samples, Sampler.Sample::published, from, publishEnd)),
                publisher.published() - publishedBefore, (long) (applied - appliedBefore), publishEnd, drainEnd,
                backlog, lag, Stats.meanCpu(samples, from, publishEnd), Stats.maxHeap(samples),
                reference.totalChanges() - changesBefore, samples);
    }

    /** Waits until the service's applied-readings counter reaches the target, or stops growing for a minute. */
    static double awaitApplied(PrometheusScraper prometheus, double target, ServiceProcess service)
            throws Exception {
        double last = -1;
        long lastProgress = System.nanoTime();
        while (true) {
            if (!service.isAlive()) {
                throw new IllegalStateException("the service died; see its log");
            }
            double now = prometheus.scrape().sum(PrometheusScraper.RECEIVED);
            if (now >= target) {
                return now;
            }
            if (now > last) {
                last = now;
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > STALL.toNanos()) {
                log("WARNING: the service stopped applying readings %,d short of what was published",
                        (long) (target - now));
                return now;
            }
            Thread.sleep(200);
        }
    }

    private static String jcmd() {
        return Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
    }

    /** Mid-run: top, PostgreSQL's sessions and two thread dumps of the service, to one file. */
    private void writeDiagnostics(ServiceProcess service, BenchDatabase db) {
        Path file = o.outDir().resolve("diagnostics-" + stamp + ".txt");
        StringBuilder out = new StringBuilder();
        try {
            out.append("== top\n").append(command(List.of("top", "-b", "-n", "1", "-w", "250")));
            for (int i = 0; i < 5; i++) {
                out.append("== pg_stat_activity #").append(i + 1).append('\n').append(db.activity());
                Thread.sleep(200);
            }
            String jcmd = jcmd();
            for (int i = 0; i < 2; i++) {
                out.append("== jcmd ").append(service.pid()).append(" Thread.print #").append(i + 1).append('\n')
                        .append(command(List.of(jcmd, String.valueOf(service.pid()), "Thread.print")));
                Thread.sleep(1000);
            }
            Files.writeString(file, out);
            log("diagnostics written to %s", file);
        } catch (Exception e) {
            log("diagnostics failed: %s", e);
        }
    }

    private static String command(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        p.waitFor(30, TimeUnit.SECONDS);
        return output;
    }

    private void report(RawCeiling.Result ceiling, ServiceRun run, double seedSeconds, Reference.Verdict verdict,
                        Map<String, Long> counters, Map<String, Double> others) throws IOException {
        double ratio = run.appliedPerSecond() / ceiling.consumedPerSecond();
        double serviceCpu = run.meanCpu().getOrDefault(CpuSampler.SERVICE, Double.NaN);
        String correctness = verdict.ok()
                ? String.format(Locale.US, "OK (state changes %,d)", run.changes())
                : String.format(Locale.US, "FAILED (%,d mismatches)", verdict.mismatches());
        String ceilingLabel = "raw ceiling (RabbitMQ publish->consume, persistent, confirms"
                + (o.confirmWindow() == 1000 ? "" : " (" + o.confirmWindow() + " outstanding)") + ", prefetch "
                + RawCeiling.PREFETCH + "): ";
        String serviceLabel = String.format(Locale.US, "lockwatch end to end (%d sensors, %.1f%% changes, %d s%s): ",
                o.sensors(), o.changes() * 100, o.duration(), o.rate() == 0 ? "" : ", rate " + fmt(o.rate()) + "/s");
        int width = Math.max(ceilingLabel.length(), serviceLabel.length());

        List<String> lines = new ArrayList<>();
        lines.add(pad(ceilingLabel, width) + fmt(ceiling.consumedPerSecond()) + " msg/s");
        lines.add(pad(serviceLabel, width) + fmt(run.appliedPerSecond()) + " readings/s  = "
                + String.format(Locale.US, "%.2f", ratio) + " of ceiling");
        lines.add(String.format(Locale.US, "service CPU mean %.1f cores, heap max %.0f MB; backlog at end %,d; correctness: %s",
                serviceCpu, run.maxHeapBytes() / 1048576, run.backlogAtEnd(), correctness));
        verdict.firstMismatches().forEach(m -> lines.add("  mismatch: " + m));
        lines.add("");
        lines.add(String.format(Locale.US, "  published %,d readings in %.1f s, median %s/s (ceiling run: %s/s); %,d ready in the queue and %,d not yet applied when publishing stopped",
                run.published(), run.publishSeconds(), fmt(run.publishedPerSecond()), fmt(ceiling.publishedPerSecond()),
                run.backlogAtEnd(), run.lagAtEnd()));
        lines.add(String.format(Locale.US, "  applied %,d readings in %.1f s from the start of publishing to drained (%s/s overall); pre-seed of %,d took %.1f s",
                run.applied(), run.drainedSeconds(), fmt(run.applied() / run.drainedSeconds()), o.sensors(), seedSeconds));
        lines.add("  CPU cores, service run (steady state): " + cpuLine(run.meanCpu()));
        lines.add("  CPU cores, raw ceiling (steady state): " + cpuLine(ceiling.meanCpu()));
        lines.add(String.format(Locale.US, "  state changes: %,d timed + %,d seeded = %,d expected, %,d in sensor_events; service counters %s",
                run.changes(), o.sensors(), verdict.expectedEvents(), verdict.eventsInDatabase(), counters));
        double disturbance = Math.max(ceiling.meanCpu().getOrDefault(CpuSampler.OTHER, 0.0),
                run.meanCpu().getOrDefault(CpuSampler.OTHER, 0.0));
        if (disturbance > OTHER_LOAD_WARNING) {
            lines.add(String.format(Locale.US, "  WARNING: other processes used up to %.2f cores during a phase; figures are disturbed (CPU seconds: %s)",
                    disturbance, cpuSeconds(others)));
        }
        lines.add("  medians over quiet seconds only (other processes < " + QUIET + " cores): raw ceiling "
                + quiet(ceiling.samples(), ceiling.publishEnd()) + "; lockwatch " + quiet(run.samples(), run.publishSeconds()));
        lines.add("  revision: " + REVISION + (o.serviceArgs().isEmpty() ? "" : "; service arguments: " + String.join(" ", o.serviceArgs())));
        Path json = o.outDir().resolve("ingest-" + stamp + ".json");
        lines.add("  figures: " + json + "; service log: " + o.outDir().resolve("service.log"));

        System.out.println();
        lines.forEach(System.out::println);
        Map<String, Object> figures = figures(ceiling, run, seedSeconds, verdict, counters, ratio, serviceCpu);
        figures.put("other_processes_cpu_s", others);
        Files.writeString(json, Json.write(figures));
    }

    private Map<String, Object> figures(RawCeiling.Result ceiling, ServiceRun run, double seedSeconds,
                                        Reference.Verdict verdict, Map<String, Long> counters, double ratio,
                                        double serviceCpu) {
        Map<String, Object> options = new LinkedHashMap<>();
        options.put("sensors", o.sensors());
        options.put("changes", o.changes());
        options.put("duration_s", o.duration());
        options.put("rate", o.rate());
        options.put("warmup_s", o.warmup());
        options.put("seed", o.seed());
        options.put("confirm_window", o.confirmWindow());
        options.put("isolated", o.isolated());
        options.put("service_args", o.serviceArgs());
        options.put("amqp", o.amqpUri().replaceAll("//[^@]*@", "//"));
        options.put("jdbc", o.jdbcUrl());

        Map<String, Object> c = new LinkedHashMap<>();
        c.put("setup", "durable topic exchange bound with # to a durable classic queue; persistent; publisher confirms, "
 + o.confirmWindow() + " outstanding; consumer prefetch " + RawCeiling.PREFETCH
                + ", multiple-ack every " + RawCeiling.ACK_EVERY);
        c.put("consumed_per_s_median", ceiling.consumedPerSecond());
        c.put("published_per_s_median", ceiling.publishedPerSecond());
        c.put("published", ceiling.published());
        c.put("consumed", ceiling.consumed());
        c.put("cpu_cores_mean", ceiling.meanCpu());
        List<Double> ceilingQuiet = Stats.quietRates(ceiling.samples(), Sampler.Sample::consumed, o.warmup(),
                ceiling.publishEnd(), QUIET);
        c.put("consumed_per_s_median_quiet", Stats.median(ceilingQuiet));
        c.put("quiet_seconds", ceilingQuiet.size());
        c.put("samples", samples(ceiling.samples()));

        Map<String, Object> s = new LinkedHashMap<>();
        s.put("applied_per_s_median", run.appliedPerSecond());
        s.put("ratio_to_ceiling", ratio);
        List<Double> serviceQuiet = Stats.quietRates(run.samples(), Sampler.Sample::consumed, o.warmup(),
                run.publishSeconds(), QUIET);
        s.put("applied_per_s_median_quiet", Stats.median(serviceQuiet));
        s.put("quiet_seconds", serviceQuiet.size());
        s.put("published_per_s_median", run.publishedPerSecond());
        s.put("published", run.published());
        s.put("applied", run.applied());
        s.put("publish_s", run.publishSeconds());
        s.put("drained_s", run.drainedSeconds());
        s.put("applied_per_s_overall", run.applied() / run.drainedSeconds());
        s.put("backlog_at_end", run.backlogAtEnd());
        s.put("not_applied_at_end", run.lagAtEnd());
        s.put("service_cpu_cores_mean", serviceCpu);
        s.put("heap_max_mb", run.maxHeapBytes() / 1048576);
        s.put("cpu_cores_mean", run.meanCpu());
        s.put("pre_seed_s", seedSeconds);
        s.put("counters", counters);
        s.put("samples", samples(run.samples()));

        Map<String, Object> k = new LinkedHashMap<>();
        k.put("ok", verdict.ok());
        k.put("mismatches", verdict.mismatches());
        k.put("first_mismatches", verdict.firstMismatches());
        k.put("state_changes_timed", run.changes());
        k.put("state_changes_seeded", o.sensors());
        k.put("events_expected", verdict.expectedEvents());
        k.put("events_in_database", verdict.eventsInDatabase());

        Map<String, Object> all = new LinkedHashMap<>();
        all.put("timestamp", stamp);
        all.put("revision", REVISION);
        all.put("options", options);
        all.put("machine_cores", Runtime.getRuntime().availableProcessors());
        all.put("ceiling", c);
        all.put("service", s);
        all.put("correctness", k);
        return all;
    }

    private static List<Object> samples(List<Sampler.Sample> samples) {
        List<Object> out = new ArrayList<>();
        for (Sampler.Sample x : samples) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("t", x.at());
            m.put("consumed", x.consumed());
            m.put("published", x.published());
            m.put("queue_ready", x.queueReady());
            m.put("heap_mb", x.heapBytes() / 1048576);
            m.put("cpu_cores", x.cpuCores());
            out.add(m);
        }
        return out;
    }

    private static String cpuLine(Map<String, Double> cores) {
        StringBuilder sb = new StringBuilder();
        cores.forEach((group, value) -> sb.append(sb.length() == 0 ? "" : ", ")
                .append(group).append(' ').append(String.format(Locale.US, "%.2f", value)));
        return sb.append(" (of ").append(Runtime.getRuntime().availableProcessors()).append(')').toString();
    }

    /** "N/s (k s)": the median rate over the quiet seconds of the steady state. */
    private String quiet(List<Sampler.Sample> samples, double publishEnd) {
        List<Double> rates = Stats.quietRates(samples, Sampler.Sample::consumed, o.warmup(), publishEnd, QUIET);
        return rates.isEmpty() ? "n/a (no quiet second)" : fmt(Stats.median(rates)) + "/s (" + rates.size() + " s)";
    }

    private static String cpuSeconds(Map<String, Double> seconds) {
        StringBuilder sb = new StringBuilder();
        seconds.forEach((command, value) -> sb.append(sb.length() == 0 ? "" : ", ")
                .append(command).append(' ').append(String.format(Locale.US, "%.1f", value)));
        return sb.toString();
    }

    private static String pad(String s, int width) {
        return s + " ".repeat(Math.max(0, width - s.length()));
    }

    private static String fmt(double value) {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.US, "%,.0f", value);
    }

    private static void log(String format, Object... args) {
        System.out.println("[bench] " + String.format(Locale.US, format, args));
    }
}
