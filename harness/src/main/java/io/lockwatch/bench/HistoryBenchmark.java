package io.lockwatch.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.ConnectionFactory;
import io.lockwatch.bench.HistoryQueries.Answer;
import io.lockwatch.bench.HistoryQueries.Sample;
import io.lockwatch.bench.HistoryQueries.Timed;
import io.lockwatch.history.ClickHouseHistoryStore;
import io.lockwatch.history.ClickHouseSchema;
import io.lockwatch.history.HistoryRecords.ReadingRecord;
import io.lockwatch.infra.clickhouse.ClickHouse;

/**
 * Benchmark of lockwatch's history in ClickHouse (issue #6): the sustained insert rate of the history route,
 * and the latency of the history queries over the filled table. Run it with {@code scripts/bench-history.sh},
 * which documents the options. It prints figures and asserts no timing; it fails when the table does not hold
 * exactly the rows written or an answer is wrong.
 *
 * <ol>
 *   <li>wipes its own ClickHouse database and history queue (unless {@code --reuse} finds the same fill), then
 *       starts the service ({@link ServiceProcess}) on its own virtual host and databases;</li>
 *   <li>ClickHouse alone: the service's store class inserts the same readings in the service's batch size into
 *       a scratch database, on one thread, for {@code --ceiling} seconds;</li>
 *   <li>events for the stats queries: written to PostgreSQL's {@code sensor_events} with one set-based insert,
 *       exported to ClickHouse by the service's export route;</li>
 *   <li>the fill: N readings published at full speed straight to the history queue as ingest publishes them
 *       (one message per batch), bypassing ingest; every second the service's written-readings counter, heap,
 *       CPU, the queue and ClickHouse's parts are sampled ({@link Sampler}); then the counts are checked;</li>
 *   <li>queries: random (sensor, range) reading pages, next pages and per-day stats, through the API and
 *       through the store's class; ClickHouse's own log of the latter (duration, rows read);</li>
 *   <li>prints a summary and writes the figures to {@code target/bench/history-<timestamp>.json}.</li>
 * </ol>
 */
public final class HistoryBenchmark {

    static final String HISTORY_QUEUE = "lockwatch.history.readings";
    static final String CEILING_DATABASE = HistoryOptions.DATABASE + "_ceiling";
    private static final String WRITTEN = PrometheusScraper.HISTORY_WRITTEN;
    private static final Duration STALL = Duration.ofSeconds(60);
    /** Messages a publisher may have unconfirmed (each holds --per-message readings). */
    private static final int CONFIRM_WINDOW = 20;
    /** Untimed queries per path before the timed ones (class loading, JIT, connections). */
    private static final int QUERY_WARMUP = 30;
    private static final String REVISION = System.getProperty("bench.revision", "unknown");

    private final HistoryOptions o;
    private final String stamp = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'"));
    private final Map<String, Object> figures = new LinkedHashMap<>();
    private final List<String> summary = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    /** Median rows/s of the ClickHouse-alone run; NaN when not run. */
    private double clickHouseAlone = Double.NaN;

    private HistoryBenchmark(HistoryOptions options) {
        this.o = options;
    }

    public static void main(String[] args) {
        Mains.run(args, HistoryOptions::parse, HistoryOptions.USAGE, options -> new HistoryBenchmark(options).run());
    }

    private int run() throws Exception {
        Files.createDirectories(o.outDir());
        BenchClickHouse clickHouse = new BenchClickHouse(o.clickHouseUrl(), HistoryOptions.DATABASE);
        ConnectionFactory amqp = Broker.factory(o.amqpUri());

        BenchClickHouse.Fill wanted = new BenchClickHouse.Fill(o.rows(), o.sensors(), o.days(), o.seed(),
                o.eventsPerSensor(), 0);
        BenchClickHouse.Fill recorded = o.reuse() ? clickHouse.recordedFill() : null;
        boolean fill = recorded == null || !sameFill(recorded, wanted);
        if (o.reuse() && fill) {
            log("--reuse: %s; filling", recorded == null ? "no finished fill recorded"
                    : "the recorded fill differs (" + recorded + ")");
        }
        long windowEnd = fill ? System.currentTimeMillis() / 1000 * 1000 : recorded.windowEnd();
        long windowStart = windowEnd - o.days() * HistoryQueries.DAY;
        log("%,d readings of %,d sensors measured over %d days up to %s, seed %d; %,d events per sensor; %s",
                o.rows(), o.sensors(), o.days(), Instant.ofEpochMilli(windowEnd), o.seed(), o.eventsPerSensor(),
                fill ? "fresh fill" : "reusing the recorded fill");
        log("RabbitMQ %s, PostgreSQL %s, ClickHouse %s/%s", o.amqpUri().replaceAll("//[^@]*@", "//"), o.jdbcUrl(),
                o.clickHouseUrl(), HistoryOptions.DATABASE);

        try (Broker broker = new Broker(amqp)) {
            AMQP.Queue.DeclareOk queue = broker.inspect(HISTORY_QUEUE);
            if (queue != null && queue.getConsumerCount() > 0) {
                throw new IllegalStateException(HISTORY_QUEUE + " on " + HistoryOptions.VHOST + " already has "
                        + queue.getConsumerCount() + " consumer(s): another lockwatch runs there; stop it first");
            }
            if (fill) {
                log("wiping the ClickHouse database %s and the history queue", HistoryOptions.DATABASE);
                clickHouse.recreate();
                if (queue != null) {
                    broker.purge(HISTORY_QUEUE);
                }
            }

            Path serviceLog = o.outDir().resolve("service-history.log");
            ServiceProcess service = ServiceProcess.start(o.jar(), List.of(), o.serviceArguments(), serviceLog,
                    o.outDir().resolve("service-history.pid"));
            Thread hook = new Thread(service::close, "bench-stop-service");
            Runtime.getRuntime().addShutdownHook(hook);
            log("service started (pid %d, %s, log %s)", service.pid(), service.baseUri(), serviceLog);
            try {
                long t0 = System.nanoTime();
                service.awaitHealthy(Duration.ofMinutes(3));
                log("service healthy after %.1f s", (System.nanoTime() - t0) / 1e9);
                queue = broker.inspect(HISTORY_QUEUE);
                if (queue == null || queue.getConsumerCount() != 1) {
                    throw new IllegalStateException("expected the service as the one consumer of " + HISTORY_QUEUE
                            + ", found " + (queue == null ? "no queue" : queue.getConsumerCount() + " consumers"));
                }
                CpuSampler cpu = new CpuSampler(service.pid());
                if (fill) {
                    if (o.ceiling() > 0) {
                        ceiling(windowStart, windowEnd, cpu);
                    }
                    events(clickHouse, windowStart, windowEnd);
                    readings(clickHouse, broker, amqp, service, cpu, windowStart, windowEnd);
                }
                boolean countsRight = verifyCounts(clickHouse);
                if (fill && countsRight) {
                    clickHouse.recordFill(new BenchClickHouse.Fill(o.rows(), o.sensors(), o.days(), o.seed(),
                            o.eventsPerSensor(), windowEnd));
                }
                queries(clickHouse, service, windowStart, windowEnd);
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
        report(fill);
        return problems.isEmpty() ? 0 : 1;
    }

    private static boolean sameFill(BenchClickHouse.Fill recorded, BenchClickHouse.Fill wanted) {
        return recorded.rows() == wanted.rows() && recorded.sensors() == wanted.sensors()
                && recorded.days() == wanted.days() && recorded.seed() == wanted.seed()
                && recorded.eventsPerSensor() == wanted.eventsPerSensor();
    }

    /**
     * ClickHouse alone: the store class the service uses writes the fill's first readings in inserts of the
     * service's batch size, one after the other on one thread (as the history route does), into a scratch
     * database with the service's schema.
     */
    private void ceiling(long windowStart, long windowEnd, CpuSampler cpu) throws Exception {
        log("ClickHouse alone: the store inserting %,d-row batches into %s for %d s", o.batchSize(),
                CEILING_DATABASE, o.ceiling());
        BenchClickHouse scratch = new BenchClickHouse(o.clickHouseUrl(), CEILING_DATABASE);
        scratch.recreate();
        ClickHouse connection = BenchClickHouse.connect(o.clickHouseUrl() + "/" + CEILING_DATABASE);
        new ClickHouseSchema(connection).migrate();
        ClickHouseHistoryStore store = new ClickHouseHistoryStore(connection);
        HistoryReadings source = new HistoryReadings(o.rows(), o.sensors(), windowStart, windowEnd, o.seed());
        AtomicLong written = new AtomicLong();
        Sampler sampler = new Sampler(() -> new Sampler.Observation(written.get(), Double.NaN), written::get,
                () -> -1, cpu);
        sampler.start();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(o.ceiling());
        double stop;
        try {
            while (System.nanoTime() - end < 0 && source.hasNext()) {
                List<ReadingRecord> batch = source.next(o.batchSize());
                store.writeReadings(batch);
                written.addAndGet(batch.size());
            }
            stop = sampler.elapsedSeconds();
            Thread.sleep(1100); // one more sample after the last insert
        } finally {
            sampler.close();
        }
        long rows = scratch.count("readings", true);
        scratch.drop();
        List<Sampler.Sample> samples = sampler.samples();
        double median = Stats.median(Stats.rates(samples, Sampler.Sample::consumed, Math.min(3, stop / 2), stop));
        Map<String, Double> meanCpu = Stats.meanCpu(samples, Math.min(3, stop / 2), stop);
        if (rows != written.get()) {
            problems.add("ClickHouse alone: " + written.get() + " rows inserted, " + rows + " in the table");
        }
        clickHouseAlone = median;
        log("ClickHouse alone: %s rows/s (median), %,d rows in %.1f s", fmt(median), written.get(), stop);
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("setup", "ClickHouseHistoryStore.writeReadings, " + o.batchSize() + "-row inserts, one thread, legacy JDBC driver over HTTP");
        c.put("rows_per_s_median", median);
        c.put("rows", written.get());
        c.put("rows_per_s_overall", written.get() / stop);
        c.put("seconds", stop);
        c.put("cpu_cores_mean", meanCpu);
        figures.put("clickhouse_alone", c);
        summary.add(String.format(Locale.US, "ClickHouse alone (the store's insert, %,d-row batches, one thread, %d s): %s rows/s (median of per-second rates); CPU %s",
                o.batchSize(), o.ceiling(), fmt(median), cpuLine(meanCpu)));
    }

    /**
     * Events for the stats queries, through the service's export: {@code --events-per-sensor} per sensor in the
     * window, one in ten a lost connection, the others state changes, inserted into PostgreSQL's
     * {@code sensor_events} (the service's durable record of events) with one statement; then waits until the
     * service has exported them all to ClickHouse.
     */
    private void events(BenchClickHouse clickHouse, long windowStart, long windowEnd) throws Exception {
        long expected = (long) o.sensors() * o.eventsPerSensor();
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("expected", expected);
        figures.put("events", e);
        try (Connection c = DriverManager.getConnection(o.jdbcUrl(), o.dbUser(), o.dbPassword())) {
            try (Statement st = c.createStatement()) {
                st.execute("TRUNCATE sensor_events CASCADE"); // and the notifications of those events, if any
            }
            if (expected == 0) {
                return;
            }
            log("events: inserting %,d into sensor_events (%s), exported by the service", expected, o.jdbcUrl());
            long slot = (windowEnd - windowStart) / o.eventsPerSensor();
            try (PreparedStatement ps = c.prepareStatement("""
                    INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at)
                    SELECT 'H' || lpad(to_hex(s), 10, '0'), k,
                           CASE WHEN k % 10 = 0 THEN 'sensor.connection_lost' ELSE 'sensor.state_changed' END,
                           CASE WHEN k % 10 = 0 THEN NULL ELSE (k % 2)::smallint END,
                           CASE WHEN k % 10 = 0 THEN NULL ELSE (1 - k % 2)::smallint END,
                           to_timestamp((?::bigint + (k - 1) * ?::bigint + (s * 7919 + k * 104729) % ?::bigint) / 1000.0)
                      FROM generate_series(1, ?) AS s, generate_series(1, ?) AS k
                     ORDER BY k, s""")) {
                ps.setLong(1, windowStart);
                ps.setLong(2, slot);
                ps.setLong(3, slot);
                ps.setInt(4, o.sensors());
                ps.setInt(5, o.eventsPerSensor());
                ps.executeUpdate();
            }
        }
        long start = System.nanoTime();
        long last = -1;
        long lastProgress = System.nanoTime();
        long inClickHouse;
        while ((inClickHouse = clickHouse.parts("events")[0]) < expected) {
            if (inClickHouse > last) {
                last = inClickHouse;
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > STALL.toNanos()) {
                throw new IllegalStateException("the export stopped at " + inClickHouse + " of " + expected + " events");
            }
            Thread.sleep(500);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        log("events: %,d exported to ClickHouse in %.1f s (%s/s)", expected, seconds, fmt(expected / seconds));
        e.put("export_s", seconds);
        e.put("exported_per_s", expected / seconds);
        summary.add(String.format(Locale.US, "events for the stats queries: %,d (%,d per sensor) exported by the service from PostgreSQL to ClickHouse in %.1f s (%s/s)",
                expected, o.eventsPerSensor(), seconds, fmt(expected / seconds)));
    }

    /** The fill, and the figures of its insert rate. */
    private void readings(BenchClickHouse clickHouse, Broker broker, ConnectionFactory amqp, ServiceProcess service,
                          CpuSampler cpu, long windowStart, long windowEnd) throws Exception {
        PrometheusScraper prometheus = new PrometheusScraper(service.baseUri());
        HistoryReadings source = new HistoryReadings(o.rows(), o.sensors(), windowStart, windowEnd, o.seed());
        AtomicLong published = new AtomicLong();
        double writtenBefore = prometheus.scrape().sum(WRITTEN);
        Sampler sampler = new Sampler(() -> {
            PrometheusScraper.Metrics m = prometheus.scrape();
            return new Sampler.Observation((long) (m.sum(WRITTEN) - writtenBefore),
                    m.sum(PrometheusScraper.JVM_MEMORY_USED, "area", "heap"));
        }, published::get, () -> broker.depth(HISTORY_QUEUE), cpu);
        // ClickHouse's own count of the rows in the table's active parts, and the parts, every second
        List<long[]> parts = new ArrayList<>();
        ScheduledExecutorService partsTimer = Executors.newSingleThreadScheduledExecutor();

        log("fill: publishing %,d readings, %,d per message, to the queue %s (at most %d messages ready)",
                o.rows(), o.perMessage(), HISTORY_QUEUE, o.maxBacklog());
        sampler.start();
        partsTimer.scheduleAtFixedRate(() -> {
            try {
                double at = sampler.elapsedSeconds();
                long[] p = clickHouse.parts("readings");
                synchronized (parts) {
                    parts.add(new long[] {Math.round(at * 1000), p[0], p[1], p[2]});
                }
            } catch (SQLException e) {
                // a missed sample
            }
        }, 0, 1, TimeUnit.SECONDS);
        double publishEnd, writtenEnd;
        long written;
        long throttled = 0;
        try (Publisher publisher = new Publisher(amqp, "", "lockwatch-histbench-publisher", CONFIRM_WINDOW)) {
            long lastReport = System.nanoTime();
            while (source.hasNext()) {
                while (broker.depth(HISTORY_QUEUE) >= o.maxBacklog()) {
                    throttled++;
                    Thread.sleep(5);
                }
                List<ReadingRecord> batch = source.next(o.perMessage());
                publisher.publish(new ReadingSource.Message(HISTORY_QUEUE, HistoryReadings.body(batch)));
                published.addAndGet(batch.size());
                if (System.nanoTime() - lastReport > TimeUnit.SECONDS.toNanos(30)) {
                    lastReport = System.nanoTime();
                    log("fill: %,d published, %,d written", published.get(),
                            (long) (prometheus.scrape().sum(WRITTEN) - writtenBefore));
                }
                if (!service.isAlive()) {
                    throw new IllegalStateException("the service died; see its log");
                }
            }
            publisher.awaitConfirms();
            publishEnd = sampler.elapsedSeconds();
            if (publisher.nacked() > 0) {
                problems.add("the broker nacked " + publisher.nacked() + " history messages");
            }
            log("fill: all %,d published after %.1f s; waiting until the service has written them", published.get(),
                    publishEnd);
            written = awaitWritten(prometheus, writtenBefore, o.rows(), service);
            writtenEnd = sampler.elapsedSeconds();
            Thread.sleep(2000); // does the counter stay put?
            written = (long) (prometheus.scrape().sum(WRITTEN) - writtenBefore);
        } finally {
            sampler.close();
            partsTimer.shutdown();
            partsTimer.awaitTermination(10, TimeUnit.SECONDS);
        }

        List<Sampler.Sample> samples = sampler.samples();
        double from = o.warmup();
        List<Double> rates = Stats.rates(samples, Sampler.Sample::consumed, from, publishEnd);
        double median = Stats.median(rates);
        double steadyMean = meanRate(samples, from, publishEnd);
        double overall = written / writtenEnd;
        Map<String, Double> meanCpu = Stats.meanCpu(samples, from, publishEnd);
        double heap = Stats.maxHeap(samples);
        List<long[]> partSamples;
        synchronized (parts) {
            partSamples = List.copyOf(parts);
        }
        List<Double> clickHouseRates = new ArrayList<>();
        for (int i = 1; i < partSamples.size(); i++) {
            long[] a = partSamples.get(i - 1), b = partSamples.get(i);
            if (a[0] >= from * 1000 && b[0] <= publishEnd * 1000 && b[0] > a[0]) {
                clickHouseRates.add((b[1] - a[1]) * 1000.0 / (b[0] - a[0]));
            }
        }
        long maxParts = partSamples.stream().mapToLong(p -> p[2]).max().orElse(-1);
        log("fill: %,d written in %.1f s: %s rows/s median in steady state, %s rows/s overall", written, writtenEnd,
                fmt(median), fmt(overall));

        Map<String, Object> f = new LinkedHashMap<>();
        f.put("rows_per_s_median", median);
        f.put("rows_per_s_steady_mean", steadyMean);
        f.put("rows_per_s_overall", overall);
        f.put("rows_per_s_median_clickhouse_count", Stats.median(clickHouseRates));
        f.put("steady_state_s", List.of(from, publishEnd));
        f.put("published", published.get());
        f.put("written", written);
        f.put("publish_s", publishEnd);
        f.put("written_s", writtenEnd);
        f.put("publisher_waits_for_backlog", throttled);
        f.put("service_cpu_cores_mean", meanCpu.getOrDefault(CpuSampler.SERVICE, Double.NaN));
        f.put("heap_max_mb", heap / 1048576);
        f.put("cpu_cores_mean", meanCpu);
        f.put("active_parts_max", maxParts);
        f.put("samples", samples(samples));
        List<Object> ps = new ArrayList<>();
        for (long[] p : partSamples) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("t", p[0] / 1000.0);
            m.put("rows", p[1]);
            m.put("parts", p[2]);
            m.put("partitions", p[3]);
            ps.add(m);
        }
        f.put("clickhouse_parts", ps);
        figures.put("fill", f);

        String ratio = Double.isNaN(clickHouseAlone) ? ""
                : String.format(Locale.US, " = %.2f of ClickHouse alone", median / clickHouseAlone);
        summary.add(String.format(Locale.US, "history through lockwatch (%,d rows, %,d per message, %,d-row inserts): %s rows/s median in steady state%s; %s rows/s overall (%,d rows in %.1f s)",
                o.rows(), o.perMessage(), o.batchSize(), fmt(median), ratio, fmt(overall), written, writtenEnd));
        summary.add(String.format(Locale.US, "  steady state = %.0f-%.1f s: mean %s rows/s; from ClickHouse's own count %s rows/s (median); active parts of readings at most %d",
                from, publishEnd, fmt(steadyMean), fmt(Stats.median(clickHouseRates)), maxParts));
        summary.add(String.format(Locale.US, "  service CPU mean %.2f cores, heap max %.0f MB (-Xmx512m); CPU cores: %s",
                meanCpu.getOrDefault(CpuSampler.SERVICE, Double.NaN), heap / 1048576, cpuLine(meanCpu)));
    }

    /** Rows per second over the whole window (from the first sample in it to the last). */
    private static double meanRate(List<Sampler.Sample> samples, double from, double to) {
        Sampler.Sample first = null, last = null;
        for (Sampler.Sample s : samples) {
            if (s.at() >= from && s.at() <= to) {
                if (first == null) {
                    first = s;
                }
                last = s;
            }
        }
        return first == null || last == first ? Double.NaN
                : (last.consumed() - first.consumed()) / (last.at() - first.at());
    }

    /** Waits until the service's written counter reaches the target, or stops growing for a minute. */
    private static long awaitWritten(PrometheusScraper prometheus, double base, long target, ServiceProcess service)
            throws Exception {
        long last = -1;
        long lastProgress = System.nanoTime();
        while (true) {
            if (!service.isAlive()) {
                throw new IllegalStateException("the service died; see its log");
            }
            long now = (long) (prometheus.scrape().sum(WRITTEN) - base);
            if (now >= target) {
                return now;
            }
            if (now > last) {
                last = now;
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > STALL.toNanos()) {
                log("WARNING: the service stopped writing history %,d short of what was published", target - now);
                return now;
            }
            Thread.sleep(200);
        }
    }

    /** Exactly N readings as the store reads them (FINAL), of the sensors, and the events. */
    private boolean verifyCounts(BenchClickHouse clickHouse) throws SQLException {
        long raw = clickHouse.count("readings", false);
        long rows = clickHouse.count("readings", true);
        long sensors = clickHouse.distinctSensors();
        long events = clickHouse.count("events", true);
        long expectedEvents = (long) o.sensors() * o.eventsPerSensor();
        long[] parts = clickHouse.parts("readings");
        boolean ok = rows == o.rows() && events == expectedEvents;
        if (rows != o.rows()) {
            problems.add(String.format(Locale.US, "readings: %,d rows queryable (FINAL), expected %,d", rows, o.rows()));
        }
        if (events != expectedEvents) {
            problems.add(String.format(Locale.US, "events: %,d in ClickHouse (FINAL), expected %,d", events, expectedEvents));
        }
        Map<String, Object> k = new LinkedHashMap<>();
        k.put("ok", ok);
        k.put("readings_expected", o.rows());
        k.put("readings_final", rows);
        k.put("readings_raw", raw);
        k.put("sensors_with_readings", sensors);
        k.put("events_expected", expectedEvents);
        k.put("events_final", events);
        k.put("active_parts", parts[1]);
        k.put("partitions", parts[2]);
        k.put("readings_table", clickHouse.createStatement("readings"));
        figures.put("counts", k);
        String line = String.format(Locale.US, "rows: %,d queryable (SELECT count() FROM readings FINAL), %,d stored before merges, %,d sensors; %,d events; %s",
                rows, raw, sensors, events, ok ? "OK" : "WRONG (expected " + o.rows() + " readings, " + expectedEvents + " events)");
        summary.add(line);
        log(line);
        return ok;
    }

    /** The timed queries, through the API and through the store's class. */
    private void queries(BenchClickHouse clickHouse, ServiceProcess service, long windowStart, long windowEnd)
            throws Exception {
        if (o.queries() == 0 && o.statsQueries() == 0) {
            return;
        }
        SplittableRandom random = new SplittableRandom(o.seed() * 31 + 7);
        List<Sample> warmup = HistoryQueries.rangeSamples(QUERY_WARMUP, o.sensors(), windowStart, windowEnd, random);
        List<Sample> ranges = HistoryQueries.rangeSamples(o.queries(), o.sensors(), windowStart, windowEnd, random);
        List<Sample> stats = HistoryQueries.statsSamples(o.statsQueries(), o.sensors(), windowStart, windowEnd, random);
        ClickHouse session = clickHouse.loggedSession();
        HistoryQueries q = new HistoryQueries(service.baseUri(), new ClickHouseHistoryStore(session));
        long[] parts = clickHouse.parts("readings");
        log("queries: %,d random ranges (1 d, 7 d, %d d) and %,d stats, one at a time, through the API and the store; readings in %d active parts, %d partitions",
                o.queries(), o.days(), o.statsQueries(), parts[1], parts[2]);
        for (Sample s : warmup) {
            q.apiReadings(s, null);
            q.storeReadings(s, null);
            if (o.eventsPerSensor() > 0) {
                q.apiStats(s);
                q.storeStats(s);
            }
        }

        // first pages, API then store, over the same samples
        List<Timed<Answer>> apiFirst = new ArrayList<>(), storeFirst = new ArrayList<>();
        for (Sample s : ranges) {
            apiFirst.add(q.apiReadings(s, null));
        }
        long[] storeFirstWindow = new long[2];
        storeFirstWindow[0] = clickHouse.now();
        for (Sample s : ranges) {
            storeFirst.add(q.storeReadings(s, null));
        }
        storeFirstWindow[1] = clickHouse.now();
        secondBoundary(clickHouse);

        // next pages of the ranges with more than a page, API then store
        List<Timed<Answer>> apiNext = new ArrayList<>(), storeNext = new ArrayList<>();
        List<Integer> withNext = new ArrayList<>();
        int mismatches = 0;
        int wrong = 0;
        for (int i = 0; i < ranges.size(); i++) {
            Answer a = apiFirst.get(i).answer(), b = storeFirst.get(i).answer();
            wrong += problem("API", ranges.get(i), a.problem()) + problem("store", ranges.get(i), b.problem());
            if (!HistoryQueries.sameRows(a, b)) {
                mismatches++;
                if (mismatches <= 5) {
                    problems.add("API and store differ for " + ranges.get(i) + ": " + a + " / " + b);
                }
            }
            if (a.nextCursor() != null) {
                withNext.add(i);
                apiNext.add(q.apiReadings(ranges.get(i), a.nextCursor()));
            }
        }
        long[] storeNextWindow = new long[2];
        storeNextWindow[0] = clickHouse.now();
        for (int i : withNext) {
            Answer first = storeFirst.get(i).answer();
            storeNext.add(first.nextCursor() == null ? null : q.storeReadings(ranges.get(i), first.nextCursor()));
        }
        storeNextWindow[1] = clickHouse.now();
        secondBoundary(clickHouse);
        for (int j = 0; j < withNext.size(); j++) {
            Sample s = ranges.get(withNext.get(j));
            wrong += problem("API next page", s, HistoryQueries.checkContinuation(apiFirst.get(withNext.get(j)).answer(),
                    apiNext.get(j).answer()));
            if (storeNext.get(j) != null) {
                wrong += problem("store next page", s, HistoryQueries.checkContinuation(
                        storeFirst.get(withNext.get(j)).answer(), storeNext.get(j).answer()));
            }
        }
        if (mismatches > 0) {
            problems.add(mismatches + " of " + ranges.size() + " range queries answered differently by the API and the store");
        }

        // per-day stats over the whole window
        List<Timed<Long>> apiStats = new ArrayList<>(), storeStats = new ArrayList<>();
        for (Sample s : stats) {
            apiStats.add(q.apiStats(s));
        }
        long[] statsWindow = new long[2];
        statsWindow[0] = clickHouse.now();
        for (Sample s : stats) {
            storeStats.add(q.storeStats(s));
        }
        statsWindow[1] = clickHouse.now();
        for (int i = 0; i < stats.size(); i++) {
            long a = apiStats.get(i).answer(), b = storeStats.get(i).answer();
            if (a != o.eventsPerSensor() || b != o.eventsPerSensor()) {
                wrong++;
                if (wrong <= 5) {
                    problems.add("stats of " + stats.get(i).sensorId() + " over the window add up to " + a + " (API) / "
                            + b + " (store), expected " + o.eventsPerSensor());
                }
            }
        }
        if (wrong > 0) {
            problems.add(wrong + " wrong answers (see above)");
        }

        BenchClickHouse.Logged loggedFirst = clickHouse.logged("FROM readings FINAL", storeFirstWindow[0], storeFirstWindow[1]);
        BenchClickHouse.Logged loggedNext = clickHouse.logged("FROM readings FINAL", storeNextWindow[0], storeNextWindow[1]);
        BenchClickHouse.Logged loggedStats = clickHouse.logged("FROM events FINAL", statsWindow[0], statsWindow[1]);
        long tableRows = clickHouse.count("readings", false);
        long eventRows = clickHouse.count("events", false);

        reportQueries(ranges, apiFirst, storeFirst, apiNext, storeNext, apiStats, storeStats, loggedFirst, loggedNext,
                loggedStats, tableRows, eventRows, parts);
    }

    /** query_log's times are whole seconds: the next pass starts in a later second than this one ended. */
    private static void secondBoundary(BenchClickHouse clickHouse) throws Exception {
        long now = clickHouse.now();
        while (clickHouse.now() == now) {
            Thread.sleep(50);
        }
    }

    private int problem(String path, Sample s, String problem) {
        if (problem == null) {
            return 0;
        }
        if (problems.size() < 10) {
            problems.add(path + " " + s + ": " + problem);
        }
        return 1;
    }

    private void reportQueries(List<Sample> ranges, List<Timed<Answer>> apiFirst, List<Timed<Answer>> storeFirst,
                               List<Timed<Answer>> apiNext, List<Timed<Answer>> storeNext, List<Timed<Long>> apiStats,
                               List<Timed<Long>> storeStats, BenchClickHouse.Logged loggedFirst,
                               BenchClickHouse.Logged loggedNext, BenchClickHouse.Logged loggedStats, long tableRows,
                               long eventRows, long[] parts) {
        Map<String, Object> qf = new LinkedHashMap<>();
        qf.put("limit", HistoryQueries.LIMIT);
        qf.put("readings_active_parts", parts[1]);
        qf.put("readings_partitions", parts[2]);

        Map<String, Object> first = new LinkedHashMap<>();
        first.put("api", HistoryQueries.latencies(ms(apiFirst)));
        first.put("store", HistoryQueries.latencies(ms(storeFirst)));
        first.put("clickhouse_logged", logged(loggedFirst, tableRows));
        Map<String, Object> byRange = new LinkedHashMap<>();
        for (String range : ranges.stream().map(Sample::range).distinct().toList()) {
            List<Double> api = new ArrayList<>(), store = new ArrayList<>();
            long rows = 0;
            int n = 0, full = 0;
            for (int i = 0; i < ranges.size(); i++) {
                if (ranges.get(i).range().equals(range)) {
                    api.add(apiFirst.get(i).ms());
                    store.add(storeFirst.get(i).ms());
                    rows += apiFirst.get(i).answer().rows();
                    full += apiFirst.get(i).answer().nextCursor() != null ? 1 : 0;
                    n++;
                }
            }
            Map<String, Object> r = new LinkedHashMap<>();
            r.put("queries", n);
            r.put("rows_mean", (double) rows / n);
            r.put("with_next_page", full);
            r.put("api", HistoryQueries.latencies(api));
            r.put("store", HistoryQueries.latencies(store));
            byRange.put(range, r);
        }
        first.put("by_range", byRange);
        IntSummary rows = IntSummary.of(apiFirst.stream().map(t -> t.answer().rows()).toList());
        first.put("rows_returned", rows.map());
        qf.put("first_page", first);

        Map<String, Object> next = new LinkedHashMap<>();
        next.put("api", HistoryQueries.latencies(ms(apiNext)));
        next.put("store", HistoryQueries.latencies(ms(storeNext)));
        next.put("clickhouse_logged", logged(loggedNext, tableRows));
        next.put("rows_returned", IntSummary.of(apiNext.stream().map(t -> t.answer().rows()).toList()).map());
        qf.put("next_page", next);

        Map<String, Object> st = new LinkedHashMap<>();
        st.put("api", HistoryQueries.latencies(msLong(apiStats)));
        st.put("store", HistoryQueries.latencies(msLong(storeStats)));
        st.put("clickhouse_logged", logged(loggedStats, eventRows));
        st.put("events_in_table", eventRows);
        qf.put("stats", st);
        figures.put("queries", qf);

        summary.add(String.format(Locale.US, "queries, one at a time, over %,d readings in %d active parts (%d partitions), limit %d:",
                tableRows, parts[1], parts[2], HistoryQueries.LIMIT));
        summary.add(String.format(Locale.US, "  %-42s %8s %8s %8s %8s   %s", "", "p50", "p95", "p99", "max", ""));
        summary.add(latencyLine(String.format(Locale.US, "range, API end to end (%,d)", apiFirst.size()), ms(apiFirst),
                String.format(Locale.US, "rows/page mean %.1f, min %d, max %d", rows.mean(), rows.min(), rows.max())));
        summary.add(latencyLine("range, store SQL over JDBC", ms(storeFirst), ""));
        summary.add(latencyLine("range, ClickHouse's own (query_log)", loggedFirst.durationsMs(),
                readRows(loggedFirst, tableRows, storeFirst.size())));
        byRange.forEach((range, r) -> {
            Map<?, ?> m = (Map<?, ?>) r;
            Map<?, ?> api = (Map<?, ?>) m.get("api");
            Map<?, ?> store = (Map<?, ?>) m.get("store");
            summary.add(String.format(Locale.US, "    %-40s API p50 %s / p99 %s, store p50 %s / p99 %s; rows mean %.1f, next page in %s",
                    range + " ranges (" + m.get("queries") + ")", millis(api.get("p50_ms")), millis(api.get("p99_ms")),
                    millis(store.get("p50_ms")), millis(store.get("p99_ms")), (Double) m.get("rows_mean"), m.get("with_next_page")));
        });
        summary.add(latencyLine(String.format(Locale.US, "next page (cursor), API (%,d)", apiNext.size()), ms(apiNext),
                "rows/page mean " + String.format(Locale.US, "%.1f", IntSummary.of(apiNext.stream().map(t -> t.answer().rows()).toList()).mean())));
        summary.add(latencyLine("next page (cursor), store", ms(storeNext), ""));
        summary.add(latencyLine("next page, ClickHouse's own", loggedNext.durationsMs(),
                readRows(loggedNext, tableRows, storeNext.size())));
        summary.add(latencyLine(String.format(Locale.US, "per-day stats %d d, API (%,d)", o.days(), apiStats.size()),
                msLong(apiStats), String.format(Locale.US, "over %,d events", eventRows)));
        summary.add(latencyLine("per-day stats, store", msLong(storeStats), ""));
        summary.add(latencyLine("per-day stats, ClickHouse's own", loggedStats.durationsMs(),
                readRows(loggedStats, eventRows, storeStats.size())));
    }

    private static Map<String, Object> logged(BenchClickHouse.Logged l, long tableRows) {
        Map<String, Object> m = HistoryQueries.latencies(l.durationsMs());
        m.put("read_rows_mean", l.meanReadRows());
        m.put("read_rows_max", l.maxReadRows());
        m.put("read_bytes_mean", l.meanReadBytes());
        m.put("table_rows", tableRows);
        return m;
    }

    private static String readRows(BenchClickHouse.Logged l, long tableRows, int expected) {
        String line = String.format(Locale.US, "rows read mean %,.0f (%.2f%% of %,d), max %,d", l.meanReadRows(),
                100 * l.meanReadRows() / tableRows, tableRows, l.maxReadRows());
        return l.queries() == expected ? line : line + String.format(Locale.US, "; %d of %d queries found in the log",
                l.queries(), expected);
    }

    private static String latencyLine(String label, List<Double> ms, String tail) {
        return String.format(Locale.US, "  %-42s %8s %8s %8s %8s   %s", label,
                millis(HistoryQueries.percentile(ms, 0.5)), millis(HistoryQueries.percentile(ms, 0.95)),
                millis(HistoryQueries.percentile(ms, 0.99)), millis(HistoryQueries.percentile(ms, 1.0)), tail).stripTrailing();
    }

    private static String millis(Object value) {
        double v = (Double) value;
        return Double.isNaN(v) ? "n/a" : String.format(Locale.US, v < 10 ? "%.2f ms" : "%.1f ms", v);
    }

    private static List<Double> ms(List<Timed<Answer>> timed) {
        return timed.stream().filter(Objects::nonNull).map(Timed::ms).toList();
    }

    private static List<Double> msLong(List<Timed<Long>> timed) {
        return timed.stream().map(Timed::ms).toList();
    }

    /** Mean, min and max of small counts. */
    private record IntSummary(double mean, int min, int max) {
        static IntSummary of(List<Integer> values) {
            return new IntSummary(values.stream().mapToInt(Integer::intValue).average().orElse(Double.NaN),
                    values.stream().mapToInt(Integer::intValue).min().orElse(0),
                    values.stream().mapToInt(Integer::intValue).max().orElse(0));
        }

        Map<String, Object> map() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("mean", mean);
            m.put("min", min);
            m.put("max", max);
            return m;
        }
    }

    private void report(boolean filled) throws Exception {
        Map<String, Object> options = new LinkedHashMap<>();
        options.put("rows", o.rows());
        options.put("sensors", o.sensors());
        options.put("days", o.days());
        options.put("per_message", o.perMessage());
        options.put("batch_size", o.batchSize());
        options.put("max_backlog", o.maxBacklog());
        options.put("events_per_sensor", o.eventsPerSensor());
        options.put("queries", o.queries());
        options.put("stats_queries", o.statsQueries());
        options.put("ceiling_s", o.ceiling());
        options.put("warmup_s", o.warmup());
        options.put("seed", o.seed());
        options.put("reuse", o.reuse());
        options.put("filled", filled);
        options.put("service_args", o.serviceArgs());
        options.put("amqp", o.amqpUri().replaceAll("//[^@]*@", "//"));
        options.put("jdbc", o.jdbcUrl());
        options.put("clickhouse", o.clickHouseUrl() + "/" + HistoryOptions.DATABASE);

        Map<String, Object> all = new LinkedHashMap<>();
        all.put("timestamp", stamp);
        all.put("revision", REVISION);
        all.put("options", options);
        all.put("machine_cores", Runtime.getRuntime().availableProcessors());
        all.put("ok", problems.isEmpty());
        all.put("problems", problems);
        all.putAll(figures);
        Path json = o.outDir().resolve("history-" + stamp + ".json");
        Files.writeString(json, Json.write(all));

        System.out.println();
        summary.forEach(System.out::println);
        if (!filled) {
            System.out.println("  (--reuse: the fill of an earlier run was queried; its insert figures are in that run's JSON)");
        }
        problems.forEach(p -> System.out.println("  PROBLEM: " + p));
        System.out.println("  revision: " + REVISION + "; " + Runtime.getRuntime().availableProcessors()
                + " cores shared by RabbitMQ, PostgreSQL, ClickHouse, the service and this harness"
                + (o.serviceArgs().isEmpty() ? "" : "; service arguments: " + String.join(" ", o.serviceArgs())));
        System.out.println("  figures: " + json + "; service log: " + o.outDir().resolve("service-history.log"));
    }

    private static List<Object> samples(List<Sampler.Sample> samples) {
        List<Object> out = new ArrayList<>();
        for (Sampler.Sample x : samples) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("t", x.at());
            m.put("written", x.consumed());
            m.put("published", x.published());
            m.put("queue_ready_messages", x.queueReady());
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
        return sb.toString();
    }

    private static String fmt(double value) {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.US, "%,.0f", value);
    }

    private static void log(String format, Object... args) {
        System.out.println("[bench] " + String.format(Locale.US, format, args));
    }
}
