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
import java.util.Set;
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
    static final String INVALID_QUEUE = "lockwatch.readings.invalid";
    static final String CLICKHOUSE = "http://127.0.0.1:8123";
    private static final Duration STALL = Duration.ofSeconds(60);
    /** Longer than the longest gap between retries of the client drills' schedule. */
    private static final Duration NOTIFICATIONS_STALL = Duration.ofSeconds(150);
    /** Requests the benchmark's webhook receivers handle at once (above the service's default of 256 in flight). */
    private static final int WEBHOOK_THREADS = 320;
    /** Cores used by unrelated processes above which the figures are flagged as disturbed. */
    private static final double OTHER_LOAD_WARNING = 0.25;
    /** Cores used by unrelated processes below which a second counts as quiet. */
    private static final double QUIET = 0.1;
    /** The code measured, as the calling script describes it (git commit, and whether the tree had changes). */
    private static final String REVISION = System.getProperty("bench.revision", "unknown");

    private final BenchOptions o;
    /** The second instance of the two-instances drill. */
    private ServiceProcess second;
    private final List<String> drillProblems = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile String drillNotes = "";
    /** --feed-pollers: the clients pulling their feeds, and what the service held with their polls open. */
    private FeedPollerProcess feedPollers;
    /** --feed-instance: the instance without the pipeline that the pollers ask. */
    private ServiceProcess feedInstance;
    /** --feed-listener: the port of the feed listener of the instance the pollers ask; 0 without. */
    private int feedListenerPort;
    private volatile String feedHeld = "not sampled";
    private String feedLine;
    /** The future-ts drill's readings measured ahead, once published. */
    private volatile long futurePublished;
    private Map<String, Long> invalidBefore = Map.of();
    private final MalformedCorpus corpus = new MalformedCorpus();
    private long seedStartMillis;
    /** changes made by the seed; those after it, in the warm-up and the run, are all notified and checked */
    private long changesAfterSeed;
    private long checkedChanges;
    /** Where the steady state's notifications spent their time, by stage (null when none were measured). */
    private BenchDatabase.Stages stages;
    /** Where the slowest 1% of the steady state's notifications went (SlowestNotifications); null until measured. */
    private SlowestNotifications.Tail slowest;
    /** The service's stage histograms over the timed run (PipelineStages), as a report line; null until measured. */
    private String serviceStagesLine;
    /** Seconds of the paced run's latency yardstick (RabbitMQ alone at the same rate). */
    private static final int RAW_LATENCY_SECONDS = 30;
    /** RabbitMQ alone at the run's rate (a paced run only): the yardstick of its latency; null otherwise. */
    private RawCeiling.Latency rawLatency;
    /** The two-instances drill's silent sensors, and when their second reading was measured (epoch ms). */
    private List<String> silentIds = List.of();
    private volatile long silentReportedAgainAt;
    private final HeartbeatDatabase connectivity;
    private final String stamp = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'"));

    private PipelineBenchmark(BenchOptions options) {
        this.o = options;
        this.connectivity = new HeartbeatDatabase(options.jdbcUrl(), options.dbUser(), options.dbPassword());
    }

    public static void main(String[] args) {
        Mains.run(args, BenchOptions::parse, BenchOptions.USAGE, options -> new PipelineBenchmark(options).run());
    }

    /** Results of the service run. */
    private record ServiceRun(double appliedPerSecond, double publishedPerSecond, long published, long applied,
                              double publishSeconds, double drainedSeconds, long backlogAtEnd, long lagAtEnd,
                              Map<String, Double> meanCpu, double maxHeapBytes, long changes,
                              List<Sampler.Sample> samples, long startMillis, double historyCompleteSeconds,
                              List<Webhooks.Arrival> arrivals, long webhookRequests) {

        ServiceRun withNotifications(List<Webhooks.Arrival> arrivals, long requests) {
            return new ServiceRun(appliedPerSecond, publishedPerSecond, published, applied, publishSeconds,
                    drainedSeconds, backlogAtEnd, lagAtEnd, meanCpu, maxHeapBytes, changes, samples, startMillis,
                    historyCompleteSeconds, arrivals, requests);
        }

        /** Event-to-arrival latencies (ms, sorted) of the events that occurred in the steady state. */
        long[] steadyLatencies(double warmup) {
            return steadyLatencies(warmup, client -> true);
        }

        /** The same, of the given clients' notifications only. */
        long[] steadyLatencies(double warmup, java.util.function.IntPredicate clients) {
            long from = startMillis + (long) (warmup * 1000), to = startMillis + (long) (publishSeconds * 1000);
            return arrivals.stream().filter(a -> a.occurredAtMs() >= from && a.occurredAtMs() < to)
                    .filter(a -> clients.test(a.client()))
                    .mapToLong(Webhooks.Arrival::latencyMs).sorted().toArray();
        }
    }

    private int run() throws Exception {
        Files.createDirectories(o.outDir());
        log("%,d sensors, %.1f%% changes, %d s per phase, rate %s, warm-up %d s, seed %d", o.sensors(),
                o.changes() * 100, o.duration(), o.rate() == 0 ? "as fast as possible" : fmt(o.rate()) + "/s",
                o.warmup(), o.seed());
        log("RabbitMQ %s%s (%s queues), PostgreSQL %s", o.amqpUri().replaceAll("//[^@]*@", "//"),
                o.ha() ? " and the rest of its cluster" : "", o.queueType(), o.jdbcUrl());
        if (!o.serviceArgs().isEmpty()) {
            log("service arguments: %s", String.join(" ", o.serviceArgs()));
        }
        ConnectionFactory amqp = Broker.factory(o.amqpUri());
        BenchDatabase db = new BenchDatabase(o.jdbcUrl(), o.dbUser(), o.dbPassword());
        try (Broker broker = new Broker(amqp)) {
            for (String name : o.readingQueues()) {
                AMQP.Queue.DeclareOk queue = broker.inspect(name);
                if (queue != null) {
                    if (queue.getConsumerCount() > 0) {
                        throw new IllegalStateException(name + " already has " + queue.getConsumerCount()
                                + " consumer(s): another lockwatch runs against this broker; stop it first");
                    }
                    broker.purge(name); // a leftover backlog must not reach the sensors registered below
                }
            }
            Path serviceLog = o.outDir().resolve("service.log");
            // --diagnostics: Java Flight Recorder from the start (attaching it mid-run deoptimises the service's
            // compiled code and slowed it down several times over for most of the run)
            Path recording = recording("service");
            ServiceProcess service = ServiceProcess.start(o.jar(), jvmOptions(recording),
                    o.feedInstance() ? o.serviceArguments() : withFeedListener(o.serviceArguments()), serviceLog,
                    o.outDir().resolve("service.pid"));
            if (o.diagnostics()) {
                log("the service records itself with Java Flight Recorder to %s (written when it stops)", recording);
            }
            Thread hook = new Thread(() -> {
                if (feedInstance != null) {
                    feedInstance.close();
                }
                service.close();
            }, "bench-stop-service");
            Runtime.getRuntime().addShutdownHook(hook);
            log("service started (pid %d, %s, log %s)", service.pid(), service.baseUri(), serviceLog);
            try {
                return measure(service, broker, amqp, db);
            } finally {
                log("stopping the service (SIGTERM)");
                if (feedInstance != null) {
                    feedInstance.close();
                }
                if (second != null) {
                    second.close();
                }
                service.close();
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException e) {
                    // shutting down already
                }
            }
        }
    }

    /** Where an instance's flight recording goes with --diagnostics. */
    private Path recording(String instance) {
        return o.outDir().toAbsolutePath().resolve(instance + "-" + stamp + ".jfr");
    }

    /** With --diagnostics, Java Flight Recorder from the instance's start to {@code recording}, written when it stops. */
    private List<String> jvmOptions(Path recording) {
        List<String> options = new ArrayList<>(o.serviceJvmOptions());
        // every instance's GC pauses with wall-clock times, for where the slowest notifications' time went
        options.add(SlowestNotifications.gcLogOption(gcLog(recording)));
        if (o.diagnostics()) {
            options.add("-XX:StartFlightRecording=settings=default,dumponexit=true,filename=" + recording);
        }
        return options;
    }

    private static Path gcLog(Path recording) {
        return recording.resolveSibling(recording.getFileName().toString().replace(".jfr", "-gc.log"));
    }

    /** Messages ready in the readings queue(s). */
    private long readingsDepth(Broker broker) throws IOException {
        long total = 0;
        for (String name : o.readingQueues()) {
            total += broker.depth(name);
        }
        return total;
    }

    /** Consumers on the readings queue(s), added up. */
    private long consumers(Broker broker) throws IOException {
        long total = 0;
        for (String name : o.readingQueues()) {
            AMQP.Queue.DeclareOk queue = broker.inspect(name);
            total += queue == null ? 0 : queue.getConsumerCount();
        }
        return total;
    }

    /** The service's instances: the one, or both in the two-instances drill. */
    private List<ServiceProcess> instances(ServiceProcess service) {
        return second == null ? List.of(service) : List.of(service, second);
    }

    /**
     * Until the instances consume as they will for the run: one queue, a consumer per instance; partitions, one
     * consumer per partition queue and each instance with its even share (its gauge of owned partitions).
     */
    private void awaitConsumers(Broker broker, ServiceProcess service) throws Exception {
        List<ServiceProcess> instances = instances(service);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        String seen = "";
        while (System.nanoTime() < deadline) {
            List<Long> perQueue = new ArrayList<>();
            for (String name : o.readingQueues()) {
                AMQP.Queue.DeclareOk queue = broker.inspect(name);
                perQueue.add(queue == null ? -1L : queue.getConsumerCount());
            }
            List<Long> owned = new ArrayList<>();
            for (ServiceProcess instance : instances) {
                owned.add((long) new PrometheusScraper(instance.baseUri()).scrape().sum(PrometheusScraper.PARTITIONS_OWNED));
            }
            boolean ready = o.partitions() <= 1
                    ? perQueue.get(0) == instances.size()
                    : perQueue.stream().allMatch(n -> n == 1)
                      && owned.stream().allMatch(n -> n >= o.partitions() / instances.size());
            seen = "consumers per queue " + perQueue + ", partitions owned per instance " + owned;
            if (ready) {
                log("readings consumed as expected: %s", seen);
                return;
            }
            Thread.sleep(200); // polling the broker and the instances for a condition, not waiting out a time
        }
        throw new IllegalStateException("the instances did not take up their readings queues within 60 s: " + seen);
    }

    /** With --service-cpus: limits instance {@code n} to that many cores from now on. */
    private void limitCpu(ServiceProcess instance, int n) throws IOException {
        if (o.serviceCpus() > 0) {
            instance.limitCpu(o.serviceCpus(), "lockwatch-bench-" + n);
            log("service instance %d limited to %.2f cores (cgroup lockwatch-bench-%d)", n, o.serviceCpus(), n);
        }
    }

    private int measure(ServiceProcess service, Broker broker, ConnectionFactory amqp, BenchDatabase db)
            throws Exception {
        long t0 = System.nanoTime();
        service.awaitHealthy(Duration.ofMinutes(3));
        log("service healthy after %.1f s", (System.nanoTime() - t0) / 1e9);
        if (o.instances() > 1) {
            Path recording = recording("service-2");
            second = ServiceProcess.start(o.jar(), jvmOptions(recording), o.serviceArguments(),
                    o.outDir().resolve("service-2.log"), o.outDir().resolve("service-2.pid"));
            log("second instance started (pid %d, %s, log %s)", second.pid(), second.baseUri(), o.outDir().resolve("service-2.log"));
            if (o.diagnostics()) {
                log("the second instance records itself to %s", recording);
            }
            second.awaitHealthy(Duration.ofMinutes(3));
        }
        awaitConsumers(broker, service);
        if (o.feedInstance()) {
            List<String> args = withFeedListener(o.serviceArguments());
            args.add("--lockwatch.pipeline.enabled=false");
            Path log = o.outDir().resolve("service-api.log");
            feedInstance = ServiceProcess.start(o.jar(), jvmOptions(recording("service-api")), args, log,
                    o.outDir().resolve("service-api.pid"));
            feedInstance.awaitHealthy(Duration.ofMinutes(3));
            log("instance for client traffic started, without the pipeline (pid %d, %s, log %s)", feedInstance.pid(),
                    feedInstance.baseUri(), log);
        }

        log("registering %,d sensors (TRUNCATE sensors, clients, sensor_events, alarms CASCADE; one INSERT ... SELECT)", o.sensors());
        long rows = db.registerSensors(o.sensors());
        if (rows != o.sensors()) {
            throw new IllegalStateException("sensor_state has " + rows + " rows after registering " + o.sensors());
        }
        if (o.lorawan()) {
            db.nameDevices("dragino-lds02");
            log("lorawan: each sensor a Dragino LDS02 (profile dragino-lds02) on ChirpStack, DevEUI 000000<its hex id>");
        }
        if (o.drill() == Drill.TWO_INSTANCES) {
            silentIds = db.registerSilentSensors(Drill.SILENT_SENSORS, Drill.SILENT_TIMEOUT_S);
            log("drill: %d sensors with a %d s timeout registered to fall silent during the run (no client linked)",
                    silentIds.size(), Drill.SILENT_TIMEOUT_S);
        }
        for (String name : o.readingQueues()) {
            broker.purge(name);
        }
        if (o.holdAfterSetup() != null) {
            log("holding until %s exists (a script beside the run writes its own data meanwhile)", o.holdAfterSetup());
            long since = System.nanoTime();
            while (!java.nio.file.Files.exists(o.holdAfterSetup())) {
                if (System.nanoTime() - since > Duration.ofHours(1).toNanos()) {
                    throw new IllegalStateException(o.holdAfterSetup() + " did not appear within an hour");
                }
                Thread.sleep(500);
            }
            log("held for %.1f s", (System.nanoTime() - since) / 1e9);
        }

        PrometheusScraper prometheus = new PrometheusScraper(
                instances(service).stream().map(ServiceProcess::baseUri).toArray(java.net.URI[]::new));
        scraper = prometheus;
        // both instances count as the service (the second is not "another process" disturbing the run)
        CpuSampler cpu = new CpuSampler(() -> instances(service).stream().map(ServiceProcess::pid).toList());
        Duration duration = Duration.ofSeconds(o.duration());

        RawCeiling.Result ceiling;
        RawDrain.Result drainCeiling = null;
        if (o.drain() > 0) {
            log("drain ceiling: %,d messages queued to a temporary queue, then drained by a plain consumer", o.drain());
            ReadingSource ceilingSource = new ReadingSource(new Reference(o.sensors()), o.changes(), ~o.seed());
            drainCeiling = new RawDrain(amqp, broker, cpu, o.queueType()).run(ceilingSource, o.drain(), o.confirmWindow());
            log("drain ceiling: %s msg/s (%,d drained in %.1f s; queued in %.1f s)", fmt(drainCeiling.perSecond()),
                    drainCeiling.messages(), drainCeiling.drainSeconds(), drainCeiling.fillSeconds());
            ceiling = new RawCeiling.Result(Double.NaN, Double.NaN, 0, 0, Map.of(), List.of(), 0);
        } else if (o.drill() == Drill.NONE) {
            log("raw ceiling: publishing to a temporary queue for %d s", o.duration());
            ReadingSource ceilingSource = new ReadingSource(new Reference(o.sensors()), o.changes(), ~o.seed());
            ceiling = new RawCeiling(amqp, broker, cpu, o.queueType()).run(ceilingSource, duration, o.warmup(), o.confirmWindow());
            log("raw ceiling: %s msg/s consumed, %s msg/s published (medians)", fmt(ceiling.consumedPerSecond()),
                    fmt(ceiling.publishedPerSecond()));
            if (o.rate() > 0) {
                Duration latencyRun = Duration.ofSeconds(Math.min(o.duration(), RAW_LATENCY_SECONDS));
                log("raw latency: publishing %s/s to a temporary queue for %d s", fmt(o.rate()), latencyRun.toSeconds());
                rawLatency = new RawCeiling(amqp, broker, cpu, o.queueType())
                        .latency(new ReadingSource(new Reference(o.sensors()), o.changes(), ~o.seed() + 1), latencyRun,
                                o.rate(), Math.min(o.warmup(), 5), o.confirmWindow());
                log("raw latency: publish to consume p50 %s ms, p99 %s ms (%,d readings)", ms(rawLatency.quantile(0.5)),
                        ms(rawLatency.quantile(0.99)), rawLatency.latenciesMs().length);
            }
        } else {
            log("drill %s: %s (no raw ceiling)", o.drill().id, o.drill().description);
            ceiling = new RawCeiling.Result(Double.NaN, Double.NaN, 0, 0, Map.of(), List.of(), 0);
        }

        Reference reference = new Reference(o.sensors());
        ReadingSource source = new ReadingSource(reference, o.changes(), o.seed());
        Links links = new Links(o.clients(), o.links(), o.sensors());
        double seedSeconds;
        ServiceRun run;
        NotificationCheck.Verdict notified;
        try (Publisher publisher = new Publisher(amqp, EXCHANGE, "lockwatch-bench-publisher", o.confirmWindow());
             // the seed goes over AMQP either way; with --mqtt the warm-up and the timed run go as sensors' MQTT
             ReadingPublisher mqtt = o.mqtt() ? new MqttPublisher("tcp://127.0.0.1:1883", amqp.getVirtualHost(),
                     amqp.getUsername(), amqp.getPassword(), o.confirmWindow())
                     : o.lorawan() ? new LoRaWanPublisher(o.confirmWindow()) : null;
             Webhooks webhooks = new Webhooks(links.secrets(), WEBHOOK_THREADS, o.receiverDelayMs())) {
            ReadingPublisher measured = mqtt != null ? mqtt : publisher;
            seedSeconds = preSeed(publisher, source, prometheus, service);
            // linked only now, so that the seed's first readings (each a change from nothing) notify nobody
            log("registering %,d clients with a webhook receiver each on loopback, %,d sensors linked to each",
                    o.clients(), o.links());
            List<String> urls = new ArrayList<>();
            for (int c = 0; c < o.clients(); c++) {
                urls.add(webhooks.url(c));
            }
            db.registerClientsAndLinks(links.ids(), urls, links.secrets(), o.links(), o.sensors(), o.maxEventsPerRequest());
            changesAfterSeed = reference.totalChanges();
            if (o.drill() == Drill.NONE && o.serviceWarmup() > 0 && o.drain() == 0) {
                // the pulling clients too, so that the JIT has compiled their paths before the run, as the webhooks'
                startFeedPollers(service, cpu);
                warmUp(measured, source, prometheus, service, db, webhooks);
            }
            if (o.drill().parks()) {
                broker.purge(INVALID_QUEUE);
                invalidBefore = invalidByReason(prometheus.scrape());
            }
            // limited only now: the seed and the warm-up are not measured, and unlimited they take seconds instead
            // of minutes; the JIT compiler does the first part of its work at full speed (at 0.15 cores it still
            // takes 0.04-0.06 of them through the run either way)
            limitCpu(service, 1);
            if (second != null) {
                limitCpu(second, 2);
            }
            run = o.drain() > 0
                    ? drainRun(publisher, source, prometheus, broker, cpu, service, db, webhooks)
                    : timedRun(measured, source, prometheus, broker, cpu, service, db, webhooks, amqp);
            // every state change in PostgreSQL, every reading and event in ClickHouse (after a drill: by the
            // databases, as a restart resets the service's counters)
            drillProblems.addAll(awaitSettled(db, reference, seedStartMillis, service));
            if (o.drill() == Drill.TWO_INSTANCES) {
                drillProblems.addAll(checkSilences());
            }
            log("waiting for the notifications to be delivered");
            Map<String, Long> statuses = awaitNotifications(db, webhooks, service);
            checkedChanges = reference.totalChanges() - changesAfterSeed;
            boolean clientDrill = isClientDrill();
            // a kill or a database restart may fall between a POST and its record: sent again, by design
            boolean atLeastOnce = o.drill() == Drill.KILL || o.drill() == Drill.POSTGRES
                    || o.drill() == Drill.SERVICE_INSTANCE_LOSS || o.drill() == Drill.POSTGRES_FAILOVER;
            notified = NotificationCheck.check(reference, links, webhooks.arrivals(), webhooks.redeliveries(),
                    webhooks.malformed(), statuses, db.supersededByReason(), db.supersededByClient(),
                    clientDrill ? Set.of(0) : Set.of(), atLeastOnce);
            run = run.withNotifications(webhooks.arrivals(), webhooks.requests());
            feedFigures(run);
            // the same window as the steady-state latency; a client drill's misbehaving client left out
            long steadyFrom = run.startMillis() + o.warmup() * 1000L, steadyTo = run.startMillis() + (long) (run.publishSeconds() * 1000);
            List<String> leftOut = clientDrill ? List.of("Bench client 0") : List.of();
            stages = db.stages(steadyFrom, steadyTo, leftOut);
            slowest = SlowestNotifications.of(db.slowest(steadyFrom, steadyTo, leftOut),
                    SlowestNotifications.pauses(gcLog(recording("service"))), steadyFrom, steadyTo);
        }

        long expectedConsumers = o.partitions() > 1 ? o.partitions() : o.instances();
        if (consumers(broker) != expectedConsumers) {
            log("WARNING: the readings queues have %d consumers now, not %d: something else consumed readings during "
                    + "the run, or an instance is gone", consumers(broker), expectedConsumers);
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
        // the claims of due notifications of the whole run (the warm-up's included), by what they looked at
        for (String looked : List.of("everywhere", "lanes")) {
            counters.put("claims_" + looked, (long) end.sum(PrometheusScraper.CLAIMS, "looked", looked));
            counters.put("claims_" + looked + "_ms", (long) (end.sum(PrometheusScraper.CLAIMS_SECONDS, "looked", looked) * 1000));
        }

        List<String> historyProblems = checkHistory(reference);
        if (o.drain() > 0) {
            reportDrain(drainCeiling, run, seedSeconds, verdict, notified, counters);
        } else {
            report(ceiling, run, seedSeconds, verdict, notified, counters, cpu.topOthers(5));
        }
        historyProblems.forEach(p -> System.out.println("  history problem: " + p));
        boolean ok = verdict.ok() && notified.ok() && historyProblems.isEmpty();
        if (o.drill() != Drill.NONE) {
            if (o.drill().parks()) {
                drillProblems.addAll(checkParked(prometheus.scrape(), broker));
            }
            if (o.drill() == Drill.HANGING_CLIENT || o.drill() == Drill.FAILING_CLIENT) {
                // the same window as the steady-state line (events after the warm-up, while publishing), so the two
                // compare: client 0's late deliveries left out of one, the warm-up's first claims out of both
                long[] others = run.steadyLatencies(o.warmup(), client -> client != 0);
                long[] bad = run.arrivals().stream().filter(x -> x.client() == 0).mapToLong(Webhooks.Arrival::latencyMs).sorted().toArray();
                drillNotes += String.format(Locale.US, "; the other clients' latency in the steady state p50 %s ms, p99 %s ms, max %s ms (%,d); client 0: %,d delivered after it recovered, the last %s s after its event",
                        ms(NotificationCheck.quantile(others, 0.5)), ms(NotificationCheck.quantile(others, 0.99)),
                        ms(NotificationCheck.quantile(others, 1)), others.length, bad.length,
                        ms(NotificationCheck.quantile(bad, 1) / 1000));
            }
            if (o.drill() == Drill.RABBITMQ_NODE_LOSS || o.drill() == Drill.POSTGRES_FAILOVER) {
                drillNotes += "; " + nodeLossFigures(run);
            }
            // a drill's figures travel on without the report above: say there too when they are not the service's
            double disturbance = disturbance(ceiling, run);
            if (disturbance > OTHER_LOAD_WARNING) {
                drillNotes += String.format(Locale.US, "; timings DISTURBED: other processes used %.2f cores on average (%s)",
                        disturbance, cpuSeconds(cpu.topOthers(3)));
            }
            ok &= drillProblems.isEmpty();
            drillProblems.forEach(p -> System.out.println("  drill problem: " + p));
            System.out.printf(Locale.US, "%nDRILL %s: %s (state: %,d changes, %s; notifications: %,d expected, %,d delivered once, %,d superseded %s, %,d re-deliveries of an event id; history: %s; %s)%n",
                    o.drill().id, ok ? "PASS" : "FAIL", reference.totalChanges(), verdict.ok() ? "equal to the reference" : verdict.mismatches() + " mismatches",
                    notified.expected(), notified.delivered(), notified.superseded(), notified.supersededByReason(),
                    notified.redeliveries(), historyProblems.isEmpty() ? "complete" : String.join("; ", historyProblems), drillNotes);
        }
        return ok ? 0 : 1;
    }

    /**
     * Readings at the run's rate and change ratio, with the clients linked, until the service has applied them and
     * delivered their notifications; left out of every figure. Their changes are checked with the run's.
     */
    private void warmUp(ReadingPublisher publisher, ReadingSource source, PrometheusScraper prometheus,
                        ServiceProcess service, BenchDatabase db, Webhooks webhooks) throws Exception {
        log("warming the service up: publishing for %d s as in the run (left out of every figure)", o.serviceWarmup());
        double base = prometheus.scrape().sum(PrometheusScraper.RECEIVED);
        long published = publisher.publishFor(source::next, Duration.ofSeconds(o.serviceWarmup()), o.rate())
                * o.messagesPerReading();
        publisher.awaitConfirms();
        double applied = awaitApplied(prometheus, base + published, service);
        awaitCounter(prometheus, PrometheusScraper.HISTORY_WRITTEN, prometheus.scrape().sum(PrometheusScraper.RECEIVED),
                service);
        awaitNotifications(db, webhooks, service);
        log("warmed up: %,d readings applied, %,d notifications delivered", (long) (applied - base),
                webhooks.arrivals().size());
    }

    /** One reading per sensor, in random order; returns once the service has applied them all. */
    private double preSeed(Publisher publisher, ReadingSource source, PrometheusScraper prometheus,
                           ServiceProcess service) throws Exception {
        log("pre-seeding: one reading per sensor");
        long start = System.nanoTime();
        seedStartMillis = System.currentTimeMillis();
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
        log("pre-seeded in %.1f s; waiting for history to take the seed in", seconds);
        // the seed's readings and its events (one per sensor), so that exporting them does not run into the
        // timed phase
        PrometheusScraper.Metrics now = prometheus.scrape();
        awaitCounter(prometheus, PrometheusScraper.HISTORY_WRITTEN, applied, service);
        awaitCounter(prometheus, PrometheusScraper.HISTORY_EXPORTED, now.sum(PrometheusScraper.CHANGES), service,
                "kind", "events");
        return seconds;
    }

    /** The arguments of the instance the pollers ask, with its feed listener on a free port if --feed-listener. */
    private List<String> withFeedListener(List<String> args) throws IOException {
        List<String> with = new ArrayList<>(args);
        if (o.feedListener()) {
            feedListenerPort = ServiceProcess.freePort();
            with.add("--lockwatch.feed.listener.port=" + feedListenerPort);
        }
        return with;
    }

    /**
     * --feed-pollers: the first clients each keep a long poll open on their feed, from a process of their own, from
     * here to the end of the run (once: before the warm-up when there is one). Only the run's steady state counts in
     * their figures.
     */
    private void startFeedPollers(ServiceProcess service, CpuSampler cpu) throws IOException {
        if (o.feedPollers() == 0 || feedPollers != null) {
            return;
        }
        List<String> ids = new ArrayList<>();
        for (int c = 0; c < o.feedPollers(); c++) {
            ids.add(Links.clientId(c));
        }
        java.net.URI api = (feedInstance != null ? feedInstance : service).baseUri();
        feedPollers = new FeedPollerProcess(api, feedListenerPort > 0 ? java.net.URI.create("http://127.0.0.1:" + feedListenerPort) : api,
                ids, 30);
        cpu.group(CpuSampler.PULLERS, feedPollers.pid());
        if (feedInstance != null) {
            cpu.group(CpuSampler.API_INSTANCE, feedInstance.pid());
        }
        feedPollers.start();
        log("feed: %,d clients each keep a long poll open on their feed (wait 30 s), from a process of their own "
                + "at nice 19 (pid %d), on %s", o.feedPollers(), feedPollers.pid(),
                (feedInstance != null ? "the instance without the pipeline" : "the service")
                        + (feedListenerPort > 0 ? "'s feed listener (port " + feedListenerPort + ")" : "'s web server"));
    }

    private ServiceRun timedRun(ReadingPublisher publisher, ReadingSource source, PrometheusScraper prometheus,
                                Broker broker, CpuSampler cpu, ServiceProcess service, BenchDatabase db,
                                Webhooks webhooks, ConnectionFactory amqp) throws Exception {
        Reference reference = source.reference();
        long changesBefore = reference.totalChanges();
        long publishedBefore = publisher.published();
        double appliedBefore = prometheus.scrape().sum(PrometheusScraper.RECEIVED);
        log("service run: publishing to %s for %d s", o.mqtt() ? "lockwatch/readings/<sensor id> over MQTT"
                : o.lorawan() ? "ChirpStack's uplink events on Mosquitto, each twice (uplinks/s are half the readings/s below)"
                : EXCHANGE, o.duration());
        PrometheusScraper.Metrics adapterAtStart = prometheus.scrape();

        Sampler sampler = serviceSampler(prometheus, publisher, broker, cpu);
        ScheduledExecutorService diagnostics = Executors.newSingleThreadScheduledExecutor();
        if (o.diagnostics()) {
            diagnostics.schedule(() -> writeDiagnostics(service, db), o.duration() / 2, TimeUnit.SECONDS);
        }
        if (o.feedPollers() > 0) {
            startFeedPollers(service, cpu);
            diagnostics.schedule(() -> sampleFeedHeld(prometheus), o.duration() / 2, TimeUnit.SECONDS);
        }
        CpuLoad load = null;
        if (o.cpuLoad() > 0) {
            load = new CpuLoad(o.cpuLoad());
            cpu.group(CpuSampler.LOAD, load.pid());
            log("cpu load: a process beside the run uses %.2f cores in bursts of 2 ms (pid %d)", o.cpuLoad(), load.pid());
        }
        PrometheusScraper.Metrics stagesAtStart = prometheus.scrape();
        sampler.start();
        long published;
        double publishEnd, drainEnd, applied, historyEnd;
        long backlog, lag;
        java.util.concurrent.ExecutorService drill = Executors.newSingleThreadExecutor();
        java.util.concurrent.Future<?> disruption = drill.submit(() -> {
            disrupt(service, webhooks, amqp, reference);
            return null;
        });
        try {
            if (o.drill() == Drill.RABBITMQ) {
                long third = o.duration() / 3;
                // as fast as possible first, so that the broker goes down with a backlog and with readings in
                // the service's hands
                published = publisher.publishFor(source::next, Duration.ofSeconds(third), 0);
                publisher.awaitConfirms();
                long backlogBefore = readingsDepth(broker);
                log("drill: restarting RabbitMQ with %,d readings ready in the queue (publishing paused)", backlogBefore);
                services("restart", "rabbitmq");
                ((Publisher) publisher).awaitOpen(Duration.ofMinutes(2));
                drillNotes = String.format(Locale.US, "RabbitMQ restarted with %,d readings ready in the queue", backlogBefore);
                log("drill: RabbitMQ is back; publishing again");
                published += publisher.publishFor(source::next, Duration.ofSeconds(o.duration() - third), o.rate());
            } else {
                published = publisher.publishFor(source::next, Duration.ofSeconds(o.duration()), o.rate())
                        * o.messagesPerReading();
            }
            publishEnd = sampler.elapsedSeconds();
            serviceStagesLine = serviceStages(stagesAtStart, prometheus.scrape());
            backlog = readingsDepth(broker);
            lag = (long) (appliedBefore + published - prometheus.scrape().sum(PrometheusScraper.RECEIVED));
            log("published %,d readings in %.1f s; %,d ready in the queue, %,d not yet applied; draining",
                    published, publishEnd, backlog, lag);
            publisher.awaitConfirms();
            if (o.drill() == Drill.NONE) {
                applied = awaitApplied(prometheus, appliedBefore + published, service);
                drainEnd = sampler.elapsedSeconds();
                Thread.sleep(2000); // does the counter stay put?
                applied = Math.max(applied, prometheus.scrape().sum(PrometheusScraper.RECEIVED));
                awaitCounter(prometheus, PrometheusScraper.HISTORY_WRITTEN, applied, service);
                historyEnd = sampler.elapsedSeconds();
                if (o.lorawan()) {
                    PrometheusScraper.Metrics end = prometheus.scrape();
                    double read = end.sum(PrometheusScraper.ADAPTER_MESSAGES, "adapter", "chirpstack", "outcome", "reading")
                            - adapterAtStart.sum(PrometheusScraper.ADAPTER_MESSAGES, "adapter", "chirpstack", "outcome", "reading");
                    double duplicates = end.sum(PrometheusScraper.DUPLICATE)
                            - adapterAtStart.sum(PrometheusScraper.DUPLICATE);
                    log("lorawan: %,d uplink messages published (%,d uplinks, each twice); the adapter read %,.0f, ingest "
                            + "took %,.0f as duplicates: %,.0f duplicates applied (must be 0)", published,
                            published / LoRaWanPublisher.COPIES, read, duplicates,
                            published / LoRaWanPublisher.COPIES - duplicates);
                }
            } else {
                // a restart resets the service's counters: the drill settles by the databases (awaitSettled)
                disruption.get();
                applied = prometheus.scrape().sum(PrometheusScraper.RECEIVED);
                drainEnd = historyEnd = sampler.elapsedSeconds();
            }
        } finally {
            sampler.close();
            diagnostics.shutdownNow();
            drill.shutdown();
            if (load != null) {
                load.close();
            }
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
                reference.totalChanges() - changesBefore, samples, sampler.startMillis(), historyEnd, List.of(), 0);
    }

    /**
     * Mid-run, with the feed's polls open: how many the service holds, its threads and heap (with --feed-instance,
     * the instance holding them, then the one with the pipeline).
     */
    private void sampleFeedHeld(PrometheusScraper prometheus) {
        try {
            PrometheusScraper.Metrics m = feedInstance != null
                    ? new PrometheusScraper(feedInstance.baseUri()).scrape() : prometheus.scrape();
            feedHeld = String.format(Locale.US, "mid-run %,d polls open at the harness, %,.0f held by the %s; its threads %,.0f, heap %.0f MB",
                    feedPollers.open(), m.sum(PrometheusScraper.FEED_WAITING),
                    feedInstance != null ? "instance without the pipeline" : "service", m.sum(PrometheusScraper.JVM_THREADS),
                    m.sum(PrometheusScraper.JVM_MEMORY_USED, "area", "heap") / 1048576);
            if (feedInstance != null) {
                PrometheusScraper.Metrics p = prometheus.scrape();
                feedHeld += String.format(Locale.US, "; the instance with the pipeline: threads %,.0f, heap %.0f MB",
                        p.sum(PrometheusScraper.JVM_THREADS), p.sum(PrometheusScraper.JVM_MEMORY_USED, "area", "heap") / 1048576);
            }
        } catch (Exception e) {
            feedHeld = "not sampled: " + e;
        }
    }

    /** The feed's figures over the steady state, against the same clients' webhooks. */
    private void feedFigures(ServiceRun run) throws IOException {
        if (feedPollers == null) {
            return;
        }
        FeedPollerProcess.Results pulled = feedPollers.stop();
        feedPollers.close();
        long from = run.startMillis() + o.warmup() * 1000L, to = run.startMillis() + (long) (run.publishSeconds() * 1000);
        long[] latencies = pulled.latencies(from, to);
        long posted = run.arrivals().stream().filter(a -> a.client() < o.feedPollers())
                .filter(a -> a.occurredAtMs() >= from && a.occurredAtMs() < to).count();
        long[] webhook = run.steadyLatencies(o.warmup(), c -> c < o.feedPollers());
        List<String> errors = pulled.errors();
        feedLine = String.format(Locale.US, "feed latency, event to long poll answered (%,d clients, events of the steady state, %,d; the same clients' webhooks %,d): p50 %s ms, p95 %s ms, p99 %s ms, max %s ms; their webhooks p50 %s ms, p99 %s ms; %,d answers in all (warm-up too), %,d repeated events, %,d errors%s; %s",
                o.feedPollers(), latencies.length, posted, ms(NotificationCheck.quantile(latencies, 0.5)),
                ms(NotificationCheck.quantile(latencies, 0.95)), ms(NotificationCheck.quantile(latencies, 0.99)),
                ms(NotificationCheck.quantile(latencies, 1)), ms(NotificationCheck.quantile(webhook, 0.5)),
                ms(NotificationCheck.quantile(webhook, 0.99)), pulled.answers(), pulled.repeats(), errors.size(),
                errors.isEmpty() ? "" : " (first: " + errors.get(0) + ")", feedHeld);
    }

    /** Samples the service's applied readings, heap and history written, the publisher and the queue depth. */
    private Sampler serviceSampler(PrometheusScraper prometheus, ReadingPublisher publisher, Broker broker, CpuSampler cpu) {
        return new Sampler(() -> {
            PrometheusScraper.Metrics m = prometheus.scrape();
            return new Sampler.Observation((long) m.sum(PrometheusScraper.RECEIVED),
                    m.sum(PrometheusScraper.JVM_MEMORY_USED, "area", "heap"),
                    (long) m.sum(PrometheusScraper.HISTORY_WRITTEN));
        }, publisher::published, () -> readingsDepth(broker), cpu);
    }

    /**
     * What a cold start makes of a backlog: seconds from the start of the process to healthy and to its first
     * reading applied; readings per second over the drain (first applied to last), over its first minute and
     * after it (with the CPU per reading then); seconds from the start until every notification was delivered.
     */
    private record Drain(double healthySeconds, double firstAppliedSeconds, double drainSeconds, double perSecond,
                         double firstMinutePerSecond, double afterFirstMinutePerSecond,
                         Map<String, Double> afterFirstMinuteCpu, double notifiedSeconds) {
    }

    private Drain drain;

    /**
     * --drain: the service is stopped (SIGTERM), the backlog is queued, then the service is started cold and drains
     * it. The sampler's second 0 is the start of the process.
     */
    private ServiceRun drainRun(Publisher publisher, ReadingSource source, PrometheusScraper prometheus, Broker broker,
                                CpuSampler cpu, ServiceProcess service, BenchDatabase db, Webhooks webhooks)
            throws Exception {
        Reference reference = source.reference();
        long changesBefore = reference.totalChanges();
        log("drain: stopping the service (SIGTERM), then queueing %,d readings", o.drain());
        service.close();
        long t0 = System.nanoTime();
        long publishedBefore = publisher.published();
        if (o.perMessage() == 1) {
            for (long i = 0; i < o.drain(); i++) {
                publisher.publish(source.next());
            }
        } else {
            List<ReadingSource.Message> readings = new ArrayList<>(o.perMessage());
            for (long i = 0; i < o.drain(); i++) {
                readings.add(source.next());
                if (readings.size() == o.perMessage() || i == o.drain() - 1) {
                    publisher.publish(ReadingSource.array(readings));
                    readings.clear();
                }
            }
        }
        publisher.awaitConfirms();
        log("drain: %,d readings queued in %.1f s, %,d ready in the queue; starting the service", o.drain(),
                (System.nanoTime() - t0) / 1e9, readingsDepth(broker));
        // while the service starts, its metrics do not answer: those seconds have no sample
        Sampler sampler = serviceSampler(prometheus, publisher, broker, cpu);
        double healthy, drained, historyEnd, notifiedEnd;
        double applied;
        sampler.start();
        try {
            service.restart();
            service.awaitHealthy(Duration.ofMinutes(3));
            healthy = sampler.elapsedSeconds();
            log("drain: the service is healthy %.1f s after its start", healthy);
            if (o.drill() == Drill.KILL) {
                // kill -9 mid-drain: the counters start again with the process, so the drain ends when the queue is
                // empty, and what it did is checked by the databases afterwards
                awaitApplied(prometheus, o.drain() / 3.0, service);
                log("drill: kill -9 of the service (pid %d) a third into the drain", service.pid());
                double killedAt = sampler.elapsedSeconds();
                service.kill();
                service.restart();
                service.awaitHealthy(Duration.ofMinutes(3));
                drillNotes = String.format(Locale.US, "killed with -9 at %.1f s, a third into the drain; healthy again %.1f s later",
                        killedAt, sampler.elapsedSeconds() - killedAt);
                log("drill: %s", drillNotes);
                while (readingsDepth(broker) > 0) {
                    if (!service.isAlive()) {
                        throw new IllegalStateException("the service died; see its log");
                    }
                    Thread.sleep(500); // polling the broker's count, as the other waits here do
                }
                applied = o.drain();
                drained = sampler.elapsedSeconds();
                historyEnd = drained;
            } else {
                applied = awaitApplied(prometheus, o.drain(), service);
                drained = sampler.elapsedSeconds();
                awaitCounter(prometheus, PrometheusScraper.HISTORY_WRITTEN, applied, service);
                historyEnd = sampler.elapsedSeconds();
            }
            awaitNotifications(db, webhooks, service);
            notifiedEnd = sampler.elapsedSeconds();
        } finally {
            sampler.close();
        }
        List<Sampler.Sample> samples = sampler.samples();
        // the first reading applied: between the last sample without one and the first with
        double first = healthy;
        for (int i = 0; i < samples.size(); i++) {
            if (samples.get(i).consumed() > 0) {
                first = i == 0 ? samples.get(i).at() : (samples.get(i - 1).at() + samples.get(i).at()) / 2;
                break;
            }
        }
        double seconds = drained - first;
        // over the drain's first minute, or the whole drain if it was shorter
        double firstMinute = Double.NaN;
        for (Sampler.Sample x : samples) {
            if (x.at() > first && x.at() <= Math.min(first + 60, drained)) {
                firstMinute = x.consumed() / (x.at() - first);
            }
        }
        // after the first minute, once the JIT compiler has done most of its work: the rate a long drain keeps
        double afterFirstMinute = Double.NaN;
        Map<String, Double> afterCpu = Map.of();
        if (o.drill() != Drill.KILL && drained - first >= 90) {
            Sampler.Sample minute = null;
            for (Sampler.Sample x : samples) {
                if (x.at() <= first + 60) {
                    minute = x;
                }
            }
            if (minute != null && minute.at() > first) {
                afterFirstMinute = (applied - minute.consumed()) / (drained - minute.at());
                afterCpu = perReading(Stats.meanCpu(samples, minute.at(), drained), drained - minute.at(),
                        (long) (applied - minute.consumed()));
            }
        }
        drain = new Drain(healthy, first, seconds, applied / seconds, firstMinute, afterFirstMinute, afterCpu, notifiedEnd);
        log("drain: %,d applied in %.1f s from the first: %s readings/s; notifications all delivered %.1f s after the start",
                (long) applied, seconds, fmt(applied / seconds), notifiedEnd);
        return new ServiceRun(applied / seconds, Double.NaN, publisher.published() - publishedBefore, (long) applied,
                first, drained, 0, 0, Stats.meanCpu(samples, first, drained), Stats.maxHeap(samples),
                reference.totalChanges() - changesBefore, samples, sampler.startMillis(), historyEnd, List.of(), 0);
    }

    /** The window over which the most notifications a second is taken. */
    private static final long PEAK_WINDOW_MS = 5_000;

    /** The most arrivals (times in ms, sorted) in any window of that length, per second. */
    static double peakPerSecond(long[] sortedMillis, long windowMs) {
        int most = 0;
        for (int from = 0, to = 0; to < sortedMillis.length; to++) {
            while (sortedMillis[to] - sortedMillis[from] >= windowMs) {
                from++;
            }
            most = Math.max(most, to - from + 1);
        }
        return most * 1000.0 / windowMs;
    }

    /** The drain's report: its ratio to the drain ceiling, the cold start, CPU per reading by process. */
    private void reportDrain(RawDrain.Result ceiling, ServiceRun run, double seedSeconds, Reference.Verdict verdict,
                             NotificationCheck.Verdict notified, Map<String, Long> counters) throws IOException {
        double ratio = drain.perSecond() / ceiling.perSecond();
        String correctness = verdict.ok() && notified.ok()
                ? String.format(Locale.US, "OK (state changes %,d, notifications %,d)", run.changes(), notified.delivered())
                : String.format(Locale.US, "FAILED (%,d state mismatches, %,d notification problems)",
                        verdict.mismatches(), notified.problems());
        Map<String, Double> serviceUs = perReading(run.meanCpu(), drain.drainSeconds(), run.applied());
        Map<String, Double> rawUs = perReading(ceiling.meanCpu(), ceiling.drainSeconds(), ceiling.messages());
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.US, "drain ceiling (RabbitMQ alone: a plain consumer, prefetch %d, multiple-ack every %d, on a backlog of %,d): %s msg/s",
                RawCeiling.PREFETCH, RawCeiling.ACK_EVERY, ceiling.messages(), fmt(ceiling.perSecond())));
        lines.add(String.format(Locale.US, "lockwatch draining a backlog of %,d readings (%,d sensors, %.1f%% changes, %,d clients%s): %s readings/s  = %.2f of drain ceiling",
                run.applied(), o.sensors(), o.changes() * 100, o.clients(),
                o.perMessage() > 1 ? String.format(Locale.US, ", %d readings per message", o.perMessage()) : "",
                fmt(drain.perSecond()), ratio));
        lines.add(String.format(Locale.US, "cold start: healthy %.1f s after the process started, first reading applied at %.1f s; first minute of the drain %s readings/s; drained in %.1f s; every notification delivered %.1f s after the start",
                drain.healthySeconds(), drain.firstAppliedSeconds(), fmt(drain.firstMinutePerSecond()),
                drain.drainSeconds(), drain.notifiedSeconds()));
        lines.add(String.format(Locale.US, "CPU µs per reading while draining: lockwatch %s; raw drain %s", usLine(serviceUs), usLine(rawUs)));
        if (!Double.isNaN(drain.afterFirstMinutePerSecond())) {
            lines.add(String.format(Locale.US, "after the drain's first minute (the JIT compiler mostly done): %s readings/s = %.2f of drain ceiling; CPU µs per reading then: %s",
                    fmt(drain.afterFirstMinutePerSecond()), drain.afterFirstMinutePerSecond() / ceiling.perSecond(),
                    usLine(drain.afterFirstMinuteCpu())));
        }
        stagesLine().ifPresent(lines::add);
        if (slowest != null) {
            lines.add(slowest.line());
        }
        if (!run.arrivals().isEmpty()) {
            long[] at = run.arrivals().stream().mapToLong(Webhooks.Arrival::arrivedAtMs).sorted().toArray();
            long lastApplied = run.startMillis() + Math.round(run.drainedSeconds() * 1000);
            lines.add(String.format(Locale.US, "notifications of the drain: %,d received; the last %.1f s after the last reading was applied; at most %s/s over %d s",
                    at.length, (at[at.length - 1] - lastApplied) / 1000.0, fmt(peakPerSecond(at, PEAK_WINDOW_MS)),
                    PEAK_WINDOW_MS / 1000));
        }
        lines.add(String.format(Locale.US, "service heap max %.0f MB; correctness: %s", run.maxHeapBytes() / 1048576, correctness));
        verdict.firstMismatches().forEach(m -> lines.add("  mismatch: " + m));
        notified.firstProblems().forEach(m -> lines.add("  notification problem: " + m));
        lines.add(String.format(Locale.US, "  notifications: %,d changes x linked clients = %,d expected, %,d received once each with a valid signature, in order, %,d superseded %s; %,d re-deliveries of an event id; database %s",
                checkedChanges, notified.expected(), notified.delivered(), notified.superseded(),
                notified.supersededByReason(), notified.redeliveries(), notified.statuses()));
        lines.add(String.format(Locale.US, "  state changes: %,d in the drain + %,d seeded = %,d expected, %,d in sensor_events; service counters %s; pre-seed %.1f s",
                run.changes(), o.sensors(), verdict.expectedEvents(), verdict.eventsInDatabase(), counters, seedSeconds));
        lines.add("  revision: " + REVISION + (o.serviceArgs().isEmpty() ? "" : "; service arguments: " + String.join(" ", o.serviceArgs())));
        Path json = o.outDir().resolve("drain-" + stamp + ".json");
        lines.add("  figures: " + json + "; service log: " + o.outDir().resolve("service.log"));
        System.out.println();
        lines.forEach(System.out::println);

        Map<String, Object> figures = new LinkedHashMap<>();
        figures.put("timestamp", stamp);
        figures.put("revision", REVISION);
        figures.put("options", Map.of("sensors", o.sensors(), "changes", o.changes(), "backlog", o.drain(),
                "clients", o.clients(), "links_per_client", o.links(), "seed", o.seed(),
                "readings_per_message", o.perMessage()));
        figures.put("drain_ceiling", Map.of("per_s", ceiling.perSecond(), "drain_s", ceiling.drainSeconds(),
                "fill_s", ceiling.fillSeconds(), "cpu_us_per_message", rawUs, "samples", samples(ceiling.samples())));
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("per_s", drain.perSecond());
        d.put("ratio_to_drain_ceiling", ratio);
        d.put("healthy_s", drain.healthySeconds());
        d.put("first_applied_s", drain.firstAppliedSeconds());
        d.put("first_minute_per_s", drain.firstMinutePerSecond());
        d.put("after_first_minute_per_s", drain.afterFirstMinutePerSecond());
        d.put("after_first_minute_cpu_us_per_reading", drain.afterFirstMinuteCpu());
        d.put("drain_s", drain.drainSeconds());
        d.put("notified_s", drain.notifiedSeconds());
        d.put("cpu_us_per_reading", serviceUs);
        d.put("heap_max_mb", run.maxHeapBytes() / 1048576);
        d.put("counters", counters);
        d.put("samples", samples(run.samples()));
        figures.put("drain", d);
        figures.put("correctness", Map.of("ok", verdict.ok(), "mismatches", verdict.mismatches()));
        figures.put("notifications", notificationFigures(notified, new long[0], run));
        Files.writeString(json, Json.write(figures));
    }

    /** Mean cores over a span, as CPU microseconds per item handled in it. */
    private static Map<String, Double> perReading(Map<String, Double> meanCores, double seconds, long items) {
        Map<String, Double> out = new LinkedHashMap<>();
        meanCores.forEach((group, cores) -> out.put(group, cores * seconds / items * 1e6));
        return out;
    }

    private static String usLine(Map<String, Double> us) {
        StringBuilder sb = new StringBuilder();
        us.forEach((group, v) -> {
            if (!group.equals(CpuSampler.MACHINE) && v >= 0.5) {
                sb.append(sb.length() == 0 ? "" : ", ").append(group).append(' ').append(String.format(Locale.US, "%.0f", v));
            }
        });
        return sb.toString();
    }

    /** The drill's disruption, on its own thread while the readings are published. */
    private void disrupt(ServiceProcess service, Webhooks webhooks, ConnectionFactory amqp, Reference reference)
            throws Exception {
        long third = o.duration() * 1000L / 3;
        switch (o.drill()) {
            case KILL -> {
                Thread.sleep(third);
                log("drill: kill -9 of the service (pid %d)", service.pid());
                service.kill();
                service.restart();
                long t = System.nanoTime();
                service.awaitHealthy(Duration.ofMinutes(3));
                drillNotes = String.format(Locale.US, "killed with -9 at %d s, healthy again %.1f s after the restart",
                        third / 1000, (System.nanoTime() - t) / 1e9);
                log("drill: %s", drillNotes);
            }
            case RABBITMQ_NODE_LOSS -> {
                Thread.sleep(third);
                String queue = o.readingQueues().get(0);
                String leader = Management.leader(Management.vhost(o.amqpUri()), queue);
                int harnessPort = java.net.URI.create(o.amqpUri()).getPort();
                if (leader.equals(Management.node(harnessPort))) {
                    throw new IllegalStateException(queue + " is led by " + leader + ", the node the harness publishes "
                            + "through; the drill kills the leader and keeps the harness connected");
                }
                log("drill: kill -9 of %s, the leader of %s, and its data directory deleted", leader, queue);
                nodeLostAtMs = System.currentTimeMillis();
                Management.loseNode(leader);
                drillNotes = String.format(Locale.US, "%s (the leader of %s) killed with -9 at %d s, its data directory "
                        + "deleted; it stayed down", leader, queue, third / 1000);
                log("drill: %s; %s now leads %s", drillNotes, Management.awaitLeader(
                        Management.vhost(o.amqpUri()), queue, leader), queue);
            }
            case POSTGRES_FAILOVER -> {
                Thread.sleep(third);
                int port;
                try (java.sql.Connection c = java.sql.DriverManager.getConnection(o.jdbcUrl(), o.dbUser(), o.dbPassword());
                     java.sql.Statement st = c.createStatement();
                     java.sql.ResultSet rs = st.executeQuery("SELECT inet_server_port()")) {
                    rs.next();
                    port = rs.getInt(1);
                }
                String node = port == 5441 ? "node1" : "node2";
                log("drill: kill -9 of the PostgreSQL primary %s (port %d): its server and its keeper", node, port);
                nodeLostAtMs = System.currentTimeMillis();
                PgNodes.lose(node);
                drillNotes = String.format(Locale.US, "the primary %s killed with -9 (server and keeper) at %d s; it stayed down",
                        node, third / 1000);
                log("drill: %s; the standby is primary %.1f s after the kill", drillNotes, PgNodes.awaitPrimary(
                        o.jdbcUrl(), o.dbUser(), o.dbPassword(), port) / 1000.0);
            }
            case SERVICE_INSTANCE_LOSS -> {
                Thread.sleep(third);
                ServiceProcess survivor = service, lost = second;
                log("drill: kill -9 of the second instance (pid %d); it stays down", lost.pid());
                long t = System.nanoTime();
                lost.kill();
                scraper.drop(lost.baseUri());
                PrometheusScraper survivorOnly = new PrometheusScraper(survivor.baseUri());
                while (survivorOnly.scrape().sum(PrometheusScraper.PARTITIONS_OWNED) < o.partitions()) {
                    if (System.nanoTime() - t > Duration.ofMinutes(2).toNanos()) {
                        throw new IllegalStateException("the survivor did not take up every partition within 2 minutes");
                    }
                    Thread.sleep(100); // polling the survivor's gauge for a condition
                }
                drillNotes = String.format(Locale.US, "the second instance killed with -9 at %d s; the survivor owned all %d "
                        + "partitions %.1f s later", third / 1000, o.partitions(), (System.nanoTime() - t) / 1e9);
                log("drill: %s", drillNotes);
            }
            case POSTGRES -> {
                Thread.sleep(third);
                log("drill: restarting PostgreSQL");
                long t = System.nanoTime();
                services("restart", "postgres");
                drillNotes = String.format(Locale.US, "PostgreSQL restarted at %d s (%.1f s down)", third / 1000,
                        (System.nanoTime() - t) / 1e9);
                log("drill: %s", drillNotes);
            }
            case CLICKHOUSE -> {
                Thread.sleep(third);
                log("drill: stopping ClickHouse for %d s", Drill.CLICKHOUSE_OUTAGE_MS / 1000);
                services("down", "clickhouse");
                Thread.sleep(Drill.CLICKHOUSE_OUTAGE_MS); // the outage itself, as the drill defines it
                services("up", "clickhouse");
                drillNotes = "ClickHouse stopped at " + third / 1000 + " s for " + Drill.CLICKHOUSE_OUTAGE_MS / 1000 + " s";
                log("drill: ClickHouse is back");
            }
            case HANGING_CLIENT, FAILING_CLIENT -> {
                boolean hang = o.drill() == Drill.HANGING_CLIENT;
                webhooks.misbehave(0, hang, System.currentTimeMillis() + Drill.CLIENT_OUTAGE_MS);
                log("drill: client 0 %s for %d s", hang ? "hangs" : "answers 500", Drill.CLIENT_OUTAGE_MS / 1000);
                drillNotes = "client 0 " + (hang ? "hung" : "answered 500") + " for " + Drill.CLIENT_OUTAGE_MS / 1000
                        + " s; retry schedule " + Drill.SHORT_RETRY_SCHEDULE.substring(Drill.SHORT_RETRY_SCHEDULE.indexOf('=') + 1);
            }
            case MALFORMED -> {
                try (Publisher bad = new Publisher(amqp, EXCHANGE, "lockwatch-bench-malformed", o.confirmWindow())) {
                    double rate = Drill.MALFORMED_COUNT / (o.duration() * 0.8);
                    long start = System.nanoTime();
                    for (int i = 0; i < Drill.MALFORMED_COUNT; i++) {
                        long due = start + (long) (i * 1e9 / rate);
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            java.util.concurrent.locks.LockSupport.parkNanos(wait);
                        }
                        bad.publish(corpus.next());
                    }
                    bad.awaitConfirms();
                    drillNotes = String.format(Locale.US, "%,d bad messages of %d kinds published in %.1f s among the readings",
                            Drill.MALFORMED_COUNT, corpus.kinds(), (System.nanoTime() - start) / 1e9);
                    log("drill: %s", drillNotes);
                }
            }
            case FUTURE_TS -> {
                try (Publisher ahead = new Publisher(amqp, EXCHANGE, "lockwatch-bench-future", o.confirmWindow())) {
                    int sensors = o.sensors() / Drill.FUTURE_EVERY;
                    long start = System.nanoTime();
                    for (int i = 0; i < sensors; i++) {
                        long due = start + (long) (i * o.duration() * 0.8e9 / sensors);
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            java.util.concurrent.locks.LockSupport.parkNanos(wait);
                        }
                        // outside the reference: the service must park it, and go on with the sensor's genuine readings
                        ahead.publish(ReadingSource.message(reference.id(i * Drill.FUTURE_EVERY), i % 2,
                                System.currentTimeMillis() + Drill.FUTURE_AHEAD_MS));
                    }
                    ahead.awaitConfirms();
                    futurePublished = sensors;
                    drillNotes = String.format(Locale.US, "%,d readings measured %d min ahead published among the readings",
                            sensors, Drill.FUTURE_AHEAD_MS / 60_000);
                    log("drill: %s", drillNotes);
                }
            }
            case POSTGRES_READ_ONLY -> {
                Thread.sleep(third);
                log("drill: PostgreSQL read-only for %d s", Drill.READ_ONLY_MS / 1000);
                readOnly(true);
                try {
                    Thread.sleep(Drill.READ_ONLY_MS); // the outage itself, as the drill defines it
                } finally {
                    readOnly(false);
                }
                drillNotes = "PostgreSQL read-only at " + third / 1000 + " s for " + Drill.READ_ONLY_MS / 1000 + " s";
                log("drill: PostgreSQL writable again");
            }
            case TWO_INSTANCES -> silence(amqp);
            default -> {
            }
        }
    }

    /**
     * The two-instances drill's silences: each silent sensor reports once, stays silent until it is lost (by the
     * heartbeat scan of whichever instance runs it), then reports again.
     */
    private void silence(ConnectionFactory amqp) throws Exception {
        try (Publisher p = new Publisher(amqp, EXCHANGE, "lockwatch-bench-silence", o.confirmWindow())) {
            long first = System.currentTimeMillis();
            for (String id : silentIds) {
                p.publish(ReadingSource.message(id, 1, first));
            }
            p.awaitConfirms();
            awaitConnectivity("online", Duration.ofMinutes(2));
            long online = System.currentTimeMillis();
            log("drill: the %d silent sensors reported once and are online; silent from now on", silentIds.size());
            awaitConnectivity("lost", Duration.ofSeconds(Drill.SILENT_TIMEOUT_S).plusMinutes(3));
            long lost = System.currentTimeMillis();
            silentReportedAgainAt = lost;
            for (String id : silentIds) {
                p.publish(ReadingSource.message(id, 1, lost));
            }
            p.awaitConfirms();
            drillNotes = String.format(Locale.US, "%d sensors silent with a %d s timeout: all lost %.1f s after their "
                    + "reading, then reported again", silentIds.size(), Drill.SILENT_TIMEOUT_S, (lost - first) / 1e3);
            log("drill: all %d silent sensors lost %.1f s after their reading (%.1f s after all were online); "
                    + "each reports again now", silentIds.size(), (lost - first) / 1e3, (lost - online) / 1e3);
        }
    }

    /** Until every silent sensor has this connectivity. */
    private void awaitConnectivity(String state, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        long n = 0;
        while (System.nanoTime() < deadline) {
            n = connectivity.countConnectivity(silentIds, state);
            if (n == silentIds.size()) {
                return;
            }
            Thread.sleep(500); // polling the database for a condition, not waiting out a time
        }
        throw new IllegalStateException(String.format(Locale.US, "only %d of %d silent sensors %s within %d s", n,
                silentIds.size(), state, within.toSeconds()));
    }

    /**
     * The silent sensors' connectivity events: per sensor, its lost events before it reported again and its restored
     * events (a lost event after that is the next silence, as the sensor stays quiet); and how many connectivity events
     * other sensors had.
     */
    private record Silences(Map<String, Integer> lost, Map<String, Integer> restored, long others) {
        static long exactlyOnce(List<String> ids, Map<String, Integer> events) {
            return ids.stream().filter(id -> events.getOrDefault(id, 0) == 1).count();
        }

        static int total(Map<String, Integer> events) {
            return events.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    private Silences silences() throws Exception {
        Map<String, Integer> lost = new java.util.HashMap<>(), restored = new java.util.HashMap<>();
        java.util.Set<String> silent = new java.util.HashSet<>(silentIds);
        long[] others = {0};
        connectivity.forEachEvent(HeartbeatDatabase.LOST, HeartbeatDatabase.RESTORED, false, e -> {
            if (!silent.contains(e.sensorId())) {
                others[0]++;
            } else if (HeartbeatDatabase.LOST.equals(e.type()) && e.occurredAt() <= silentReportedAgainAt) {
                lost.merge(e.sensorId(), 1, Integer::sum);
            } else if (HeartbeatDatabase.RESTORED.equals(e.type())) {
                restored.merge(e.sensorId(), 1, Integer::sum);
            }
        });
        return new Silences(lost, restored, others[0]);
    }

    /** Each silence declared once: one lost event per silent sensor, then one restored event once it reported again. */
    private List<String> checkSilences() throws Exception {
        List<String> problems = new ArrayList<>();
        if (silentReportedAgainAt == 0) {
            problems.add("the silent sensors were not lost during the run");
            return problems;
        }
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        Silences seen = silences();
        while (Silences.total(seen.restored()) < silentIds.size() && System.nanoTime() < deadline) {
            Thread.sleep(500); // polling the database for a condition, not waiting out a time
            seen = silences();
        }
        long lostOnce = Silences.exactlyOnce(silentIds, seen.lost());
        long restoredOnce = Silences.exactlyOnce(silentIds, seen.restored());
        log("drill: silences: %d of %d sensors lost exactly once, %d restored exactly once; %d lost events in all, "
                + "%d restored; %d connectivity events of other sensors", lostOnce, silentIds.size(), restoredOnce,
                Silences.total(seen.lost()), Silences.total(seen.restored()), seen.others());
        if (lostOnce != silentIds.size()) {
            problems.add(String.format(Locale.US, "%d of %d silent sensors lost exactly once (lost events: %d)",
                    lostOnce, silentIds.size(), Silences.total(seen.lost())));
        }
        if (restoredOnce != silentIds.size()) {
            problems.add(String.format(Locale.US, "%d of %d silent sensors restored exactly once", restoredOnce,
                    silentIds.size()));
        }
        if (seen.others() > 0) {
            problems.add(seen.others() + " connectivity events of sensors that never fell silent");
        }
        return problems;
    }

    /** scripts/services.sh ACTION SERVICE, its output to the benchmark's log. */
    /** The run's scraper of every instance, for a drill that loses one. */
    private volatile PrometheusScraper scraper;

    /** When an HA drill killed its node (epoch ms); 0 before. */
    private volatile long nodeLostAtMs;

    /**
     * The node-loss drill's figures: the longest the service applied nothing (from the per-second samples), and the
     * notification latency of the events recorded from the kill on, against the steady state's before it.
     */
    private String nodeLossFigures(ServiceRun run) {
        double longest = 0, stalledSince = -1;
        List<Sampler.Sample> samples = run.samples();
        for (int i = 1; i < samples.size(); i++) {
            Sampler.Sample a = samples.get(i - 1), b = samples.get(i);
            if (b.at() > run.publishSeconds()) {
                break;
            }
            if (b.consumed() <= a.consumed()) {
                if (stalledSince < 0) {
                    stalledSince = a.at();
                }
                longest = Math.max(longest, b.at() - stalledSince);
            } else {
                stalledSince = -1;
            }
        }
        long[] after = run.arrivals().stream().filter(x -> x.occurredAtMs() >= nodeLostAtMs)
                .mapToLong(Webhooks.Arrival::latencyMs).sorted().toArray();
        long[] before = run.arrivals().stream().filter(x -> x.occurredAtMs() >= run.startMillis() + o.warmup() * 1000L
                && x.occurredAtMs() < nodeLostAtMs).mapToLong(Webhooks.Arrival::latencyMs).sorted().toArray();
        return String.format(Locale.US, "longest stretch with no reading applied while publishing %.0f s (1 s samples); "
                        + "notification latency of events from the kill on p50 %s ms, p99 %s ms, max %s ms (%,d), before it "
                        + "p99 %s ms, max %s ms (%,d)", longest, ms(NotificationCheck.quantile(after, 0.5)),
                ms(NotificationCheck.quantile(after, 0.99)), ms(NotificationCheck.quantile(after, 1)), after.length,
                ms(NotificationCheck.quantile(before, 0.99)), ms(NotificationCheck.quantile(before, 1)), before.length);
    }

    private static void services(String action, String service) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("scripts/services.sh", action, service).inheritIO().start();
        if (p.waitFor() != 0) {
            throw new IOException("scripts/services.sh " + action + " " + service + " failed");
        }
    }

    /**
     * After a drill: waits until PostgreSQL holds every state change and ClickHouse every reading and event of
     * the run, or nothing moves for three minutes.
     */
    private List<String> awaitSettled(BenchDatabase db, Reference reference, long since, ServiceProcess service)
            throws Exception {
        ClickHouseCounts ch = new ClickHouseCounts(CLICKHOUSE, clickHouseDatabase());
        long expectedReadings = reference.readings();
        long start = System.nanoTime(), lastProgress = start, lastLog = start;
        String last = "";
        while (true) {
            long events = db.countEvents(), readings = -1, chEvents = -1;
            try {
                readings = ch.readingsSince(since);
                chEvents = ch.eventsSince(since);
            } catch (IOException e) {
                // ClickHouse away: not settled
            }
            String now = events + "/" + readings + "/" + chEvents;
            if (events == reference.totalChanges() && readings >= expectedReadings && chEvents >= reference.totalChanges()) {
                log("settled %.1f s after publishing and the disruption ended", (System.nanoTime() - start) / 1e9);
                return List.of();
            }
            if (!now.equals(last)) {
                last = now;
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > Duration.ofMinutes(3).toNanos()) {
                return List.of(String.format(Locale.US, "not settled: %,d of %,d events in PostgreSQL, %,d of %,d readings and %,d events in ClickHouse",
                        events, reference.totalChanges(), readings, expectedReadings, chEvents));
            }
            if (System.nanoTime() - lastLog > Duration.ofSeconds(10).toNanos()) {
                lastLog = System.nanoTime();
                log("drill: settling: %,d of %,d events in PostgreSQL; ClickHouse %,d of %,d readings, %,d events%s", events,
                        reference.totalChanges(), readings, expectedReadings, chEvents, service.isAlive() ? "" : " (the service is down)");
            }
            Thread.sleep(500);
        }
    }

    private String clickHouseDatabase() {
        return o.isolated() ? BenchOptions.ISOLATED_DATABASE : "lockwatch";
    }

    /** Every reading and event of the run in ClickHouse, each once (FINAL). */
    private List<String> checkHistory(Reference reference) throws IOException, InterruptedException {
        ClickHouseCounts ch = new ClickHouseCounts(CLICKHOUSE, clickHouseDatabase());
        List<String> problems = new ArrayList<>();
        long readings = ch.readingsSince(seedStartMillis), events = ch.eventsSince(seedStartMillis);
        if (readings != reference.readings()) {
            problems.add(String.format(Locale.US, "ClickHouse holds %,d readings of the run, %,d were published", readings, reference.readings()));
        }
        if (events != reference.totalChanges()) {
            problems.add(String.format(Locale.US, "ClickHouse holds %,d events of the run, %,d expected", events, reference.totalChanges()));
        }
        log("history: ClickHouse holds %,d readings and %,d events of the run", readings, events);
        return problems;
    }

    private static Map<String, Long> invalidByReason(PrometheusScraper.Metrics m) {
        Map<String, Long> out = new java.util.TreeMap<>();
        for (String reason : List.of("body_too_large", "malformed_json", "not_an_object", "missing_sensor_id",
                "invalid_sensor_id", "missing_data", "invalid_data", "invalid_ts", "ts_in_future", "invalid_message_id",
                "processing_failed")) {
            out.put(reason, (long) m.sum(PrometheusScraper.INVALID, "reason", reason));
        }
        return out;
    }

    /** Every bad message parked with the reason its kind must get; none left behind. */
    /** Every session of the cluster read-only (what a standby is), or writable again; as the postgres superuser. */
    private static void readOnly(boolean on) throws IOException, InterruptedException {
        String sql = on ? "ALTER SYSTEM SET default_transaction_read_only = on" : "ALTER SYSTEM RESET default_transaction_read_only";
        for (String statement : List.of(sql, "SELECT pg_reload_conf()")) {
            Process p = new ProcessBuilder("runuser", "-u", "postgres", "--", "psql", "-X", "-q", "-d", "postgres",
                    "-c", statement).directory(new java.io.File("/")).inheritIO().start();
            if (p.waitFor() != 0) {
                throw new IOException("psql -c '" + statement + "' failed");
            }
        }
    }

    /** What the drill's bad messages should have made: parked by reason, counted (none for a read-only database). */
    private Map<String, Long> expectedParked() {
        return switch (o.drill()) {
            case MALFORMED -> corpus.expected();
            case FUTURE_TS -> Map.of("ts_in_future", futurePublished);
            default -> Map.of();
        };
    }

    private List<String> checkParked(PrometheusScraper.Metrics end, Broker broker) throws Exception {
        List<String> problems = new ArrayList<>();
        Map<String, Long> after = invalidByReason(end);
        Map<String, Long> counted = new java.util.TreeMap<>();
        after.forEach((reason, n) -> {
            long delta = n - invalidBefore.getOrDefault(reason, 0L);
            if (delta != 0) {
                counted.put(reason, delta);
            }
        });
        Map<String, Long> expected = new java.util.TreeMap<>(expectedParked());
        if (!counted.equals(expected)) {
            problems.add("invalid readings by reason: counted " + counted + ", expected " + expected);
        }
        long parked = broker.depth(INVALID_QUEUE);
        long bad = expected.values().stream().mapToLong(Long::longValue).sum();
        if (parked != bad) {
            problems.add(String.format(Locale.US, "%,d messages parked in %s, %,d bad ones published", parked, INVALID_QUEUE, bad));
        }
        drillNotes += String.format(Locale.US, "; %,d parked in %s, by reason %s", parked, INVALID_QUEUE, counted);
        return problems;
    }

    /** Waits until the service's applied-readings counter reaches the target, or stops growing for a minute. */
    static double awaitApplied(PrometheusScraper prometheus, double target, ServiceProcess service)
            throws Exception {
        return awaitCounter(prometheus, PrometheusScraper.RECEIVED, target, service);
    }

    /**
     * Waits until no notification is pending or being delivered (a retry would be due 5 s later by the default
     * schedule, so the wait covers retries), or nothing changes for a minute.
     */
    private static Map<String, Long> awaitNotifications(BenchDatabase db, Webhooks webhooks, ServiceProcess service)
            throws Exception {
        long lastRequests = -1;
        Map<String, Long> last = Map.of();
        long lastProgress = System.nanoTime();
        while (true) {
            if (!service.isAlive()) {
                throw new IllegalStateException("the service died; see its log");
            }
            Map<String, Long> statuses = db.notificationsByStatus();
            if (statuses.getOrDefault("pending", 0L) + statuses.getOrDefault("delivering", 0L) == 0) {
                return statuses;
            }
            if (webhooks.requests() != lastRequests || !statuses.equals(last)) {
                lastRequests = webhooks.requests();
                last = statuses;
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > NOTIFICATIONS_STALL.toNanos()) {
                log("WARNING: notifications stopped moving: %s", statuses);
                return statuses;
            }
            Thread.sleep(200);
        }
    }

    /** Waits until a counter of the service reaches the target, or stops growing for a minute. */
    private static double awaitCounter(PrometheusScraper prometheus, String counter, double target,
                                       ServiceProcess service, String... labels) throws Exception {
        double last = -1;
        long lastProgress = System.nanoTime();
        while (true) {
            if (!service.isAlive()) {
                throw new IllegalStateException("the service died; see its log");
            }
            double now = prometheus.scrape().sum(counter, labels);
            if (now >= target) {
                return now;
            }
            if (now > last) {
                last = now;
                lastProgress = System.nanoTime();
            } else if (System.nanoTime() - lastProgress > STALL.toNanos()) {
                log("WARNING: %s stopped growing %,d short of %,d", counter, (long) (target - now), (long) target);
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

    /** Mean cores of unrelated processes in the busier phase (raw ceiling or service run). */
    private static double disturbance(RawCeiling.Result ceiling, ServiceRun run) {
        return Math.max(ceiling.meanCpu().getOrDefault(CpuSampler.OTHER, 0.0),
                run.meanCpu().getOrDefault(CpuSampler.OTHER, 0.0));
    }

    private static String command(List<String> command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes());
        p.waitFor(30, TimeUnit.SECONDS);
        return output;
    }

    private void report(RawCeiling.Result ceiling, ServiceRun run, double seedSeconds, Reference.Verdict verdict,
                        NotificationCheck.Verdict notified, Map<String, Long> counters, Map<String, Double> others)
            throws IOException {
        double ratio = run.appliedPerSecond() / ceiling.consumedPerSecond();
        double serviceCpu = run.meanCpu().getOrDefault(CpuSampler.SERVICE, Double.NaN);
        String correctness = verdict.ok() && notified.ok()
                ? String.format(Locale.US, "OK (state changes %,d, notifications %,d)", run.changes(), notified.delivered())
                : String.format(Locale.US, "FAILED (%,d state mismatches, %,d notification problems)",
                        verdict.mismatches(), notified.problems());
        long[] steady = run.steadyLatencies(o.warmup());
        double[] lag = historyLag(run.samples(), o.warmup(), run.publishSeconds());
        String ceilingLabel = "raw ceiling (RabbitMQ" + (o.ha() ? " cluster of 3" : "") + ", " + o.queueType()
                + " queue, publish->consume, persistent, confirms"
                + (o.confirmWindow() == 1000 ? "" : " (" + o.confirmWindow() + " outstanding)") + ", prefetch "
                + RawCeiling.PREFETCH + "): ";
        String serviceLabel = String.format(Locale.US, "lockwatch end to end (%s%d sensors, %.1f%% changes, %d s%s%s): ",
                o.mqtt() ? "over MQTT, " : "", o.sensors(), o.changes() * 100, o.duration(),
                o.rate() == 0 ? "" : ", rate " + fmt(o.rate()) + "/s",
                o.serviceCpus() <= 0 ? "" : String.format(Locale.US, ", %d x %.2f cores", o.instances(), o.serviceCpus()));
        int width = Math.max(ceilingLabel.length(), serviceLabel.length());

        List<String> lines = new ArrayList<>();
        lines.add(pad(ceilingLabel, width) + fmt(ceiling.consumedPerSecond()) + " msg/s");
        lines.add(pad(serviceLabel, width) + fmt(run.appliedPerSecond()) + " readings/s  = "
                + String.format(Locale.US, "%.2f", ratio) + " of ceiling");
        lines.add(String.format(Locale.US, "service CPU mean %.1f cores, heap max %.0f MB; backlog at end %,d; correctness: %s",
                serviceCpu, run.maxHeapBytes() / 1048576, run.backlogAtEnd(), correctness));
        lines.add(String.format(Locale.US, "notification latency, event to POST received (events of the steady state, %,d): p50 %s ms, p95 %s ms, p99 %s ms, max %s ms",
                steady.length, ms(NotificationCheck.quantile(steady, 0.5)), ms(NotificationCheck.quantile(steady, 0.95)),
                ms(NotificationCheck.quantile(steady, 0.99)), ms(NotificationCheck.quantile(steady, 1))));
        if (rawLatency != null && rawLatency.latenciesMs().length > 0) {
            double p99 = NotificationCheck.quantile(steady, 0.99);
            lines.add(String.format(Locale.US, "  yardstick, RabbitMQ alone at %s/s (the same readings, publish to consume, %,d): p50 %s ms, p99 %s ms, max %s ms; rabbitmq %.2f cores, machine %.2f; the service's p99 = %.1f x the broker's",
                    fmt(rawLatency.rate()), rawLatency.latenciesMs().length, ms(rawLatency.quantile(0.5)),
                    ms(rawLatency.quantile(0.99)), ms(rawLatency.quantile(1)),
                    rawLatency.meanCpu().getOrDefault(CpuSampler.RABBITMQ, Double.NaN),
                    rawLatency.meanCpu().getOrDefault(CpuSampler.MACHINE, Double.NaN), p99 / rawLatency.quantile(0.99)));
        }
        stagesLine().ifPresent(lines::add);
        if (slowest != null) {
            lines.add(slowest.line());
        }
        if (serviceStagesLine != null) {
            lines.add(serviceStagesLine);
        }
        if (feedLine != null) {
            lines.add(feedLine);
        }
        if (!run.arrivals().isEmpty()) {
            long[] at = run.arrivals().stream().mapToLong(Webhooks.Arrival::arrivedAtMs).sorted().toArray();
            lines.add(String.format(Locale.US, "notifications received: at most %s/s over %d s (receiver answering %d ms after each arrival)",
                    fmt(peakPerSecond(at, PEAK_WINDOW_MS)), PEAK_WINDOW_MS / 1000, o.receiverDelayMs()));
        }
        lines.add(String.format(Locale.US, "history lag (applied, not yet written to history): max %.1f s while publishing, median %.1f s; history complete %.1f s after publishing stopped",
                lag[0], lag[1], run.historyCompleteSeconds() - run.publishSeconds()));
        verdict.firstMismatches().forEach(m -> lines.add("  mismatch: " + m));
        notified.firstProblems().forEach(m -> lines.add("  notification problem: " + m));
        lines.add("");
        lines.add(String.format(Locale.US, "  notifications: %,d clients, %,d links; %,d changes (warm-up and run) x linked clients = %,d expected, %,d received once each with a valid signature, in order, %,d superseded by a newer change %s; %,d requests, %,d re-deliveries of an event id; all, warm-up too: p50 %s ms, p99 %s ms, max %s ms; database %s",
                o.clients(), (long) o.clients() * o.links(), checkedChanges,
                notified.expected(), notified.delivered(),
                notified.superseded(), notified.supersededByReason(), run.webhookRequests(), notified.redeliveries(),
                ms(NotificationCheck.quantile(notified.latenciesMs(), 0.5)), ms(NotificationCheck.quantile(notified.latenciesMs(), 0.99)),
                ms(NotificationCheck.quantile(notified.latenciesMs(), 1)), notified.statuses()));
        lines.add(String.format(Locale.US, "  published %,d readings in %.1f s, median %s/s (ceiling run: %s/s); %,d ready in the queue and %,d not yet applied when publishing stopped",
                run.published(), run.publishSeconds(), fmt(run.publishedPerSecond()), fmt(ceiling.publishedPerSecond()),
                run.backlogAtEnd(), run.lagAtEnd()));
        lines.add(String.format(Locale.US, "  applied %,d readings in %.1f s from the start of publishing to drained (%s/s overall); pre-seed of %,d took %.1f s",
                run.applied(), run.drainedSeconds(), fmt(run.applied() / run.drainedSeconds()), o.sensors(), seedSeconds));
        lines.add("  CPU cores, service run (steady state): " + cpuLine(run.meanCpu()));
        lines.add("  CPU cores, raw ceiling (steady state): " + cpuLine(ceiling.meanCpu()));
        lines.add(String.format(Locale.US, "  state changes: %,d timed + %,d in the warm-up + %,d seeded = %,d expected, %,d in sensor_events; service counters %s",
                run.changes(), checkedChanges - run.changes(), o.sensors(), verdict.expectedEvents(),
                verdict.eventsInDatabase(), counters));
        double disturbance = disturbance(ceiling, run);
        if (disturbance > OTHER_LOAD_WARNING) {
            lines.add(String.format(Locale.US, "  WARNING: other processes used up to %.2f cores during a phase; figures are disturbed (CPU seconds: %s)",
                    disturbance, cpuSeconds(others)));
        }
        lines.add("  medians over quiet seconds only (other processes < " + QUIET + " cores): raw ceiling "
                + quiet(ceiling.samples(), ceiling.publishEnd()) + "; lockwatch " + quiet(run.samples(), run.publishSeconds()));
        lines.add("  revision: " + REVISION + (o.serviceArgs().isEmpty() ? "" : "; service arguments: " + String.join(" ", o.serviceArgs())));
        Path json = o.outDir().resolve("pipeline-" + stamp + ".json");
        Path png = o.outDir().resolve("pipeline-" + stamp + ".png");
        lines.add("  figures: " + json + "; plot: " + png + "; service log: " + o.outDir().resolve("service.log"));

        System.out.println();
        lines.forEach(System.out::println);
        Map<String, Object> figures = figures(ceiling, run, seedSeconds, verdict, counters, ratio, serviceCpu);
        figures.put("notifications", notificationFigures(notified, steady, run));
        Map<String, Object> history = new LinkedHashMap<>();
        history.put("lag_max_s_while_publishing", lag[0]);
        history.put("lag_median_s_while_publishing", lag[1]);
        history.put("complete_s_after_publishing", run.historyCompleteSeconds() - run.publishSeconds());
        figures.put("history", history);
        figures.put("other_processes_cpu_s", others);
        Files.writeString(json, Json.write(figures));
        plot(png, run, ceiling);
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
        options.put("service_warmup_s", o.drill() == Drill.NONE ? o.serviceWarmup() : 0);
        options.put("seed", o.seed());
        options.put("confirm_window", o.confirmWindow());
        options.put("isolated", o.isolated());
        options.put("service_args", o.serviceArgs());
        options.put("instances", o.instances());
        options.put("feed_pollers", o.feedPollers());
        options.put("feed_instance", o.feedInstance());
        options.put("service_cpus", o.serviceCpus());
        options.put("amqp", o.amqpUri().replaceAll("//[^@]*@", "//"));
        options.put("queue_type", o.queueType());
        options.put("ha", o.ha());
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
        if (feedLine != null) {
            s.put("feed", feedLine);
        }
        if (serviceStagesLine != null) {
            s.put("service_stages", serviceStagesLine.trim());
        }
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
        if (rawLatency != null) {
            all.put("raw_latency", Map.of("rate_per_s", rawLatency.rate(), "count", rawLatency.latenciesMs().length,
                    "p50_ms", rawLatency.quantile(0.5), "p99_ms", rawLatency.quantile(0.99), "max_ms", rawLatency.quantile(1),
                    "cpu_cores", rawLatency.meanCpu()));
        }
        all.put("service", s);
        all.put("correctness", k);
        return all;
    }

    /** Where the steady state's notifications spent their time, if that was measured. */
    /**
     * Each stage of the service's own histograms (lockwatch_pipeline_stage_seconds) over the timed run, warm-up
     * seconds included, p50 / p99 in ms: where the time between the broker and the POST's answer went.
     */
    private static String serviceStages(PrometheusScraper.Metrics from, PrometheusScraper.Metrics to) {
        StringBuilder b = new StringBuilder("  by stage, the service's histograms over the run (p50 / p99 ms):");
        for (String stage : PrometheusScraper.STAGES) {
            b.append(String.format(Locale.US, " %s %.1f / %.1f;", stage,
                    to.quantileSince(from, PrometheusScraper.STAGE_BUCKETS, 0.5, "stage", stage) * 1000,
                    to.quantileSince(from, PrometheusScraper.STAGE_BUCKETS, 0.99, "stage", stage) * 1000));
        }
        return b.substring(0, b.length() - 1);
    }

    private java.util.Optional<String> stagesLine() {
        if (stages == null || stages.count() == 0) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(String.format(Locale.US, "  by stage, first attempts (%,d%s; the service's timestamps): reading to its batch's transaction p50 %.0f ms, p99 %.0f, max %.0f; on to the POST p50 %.0f ms, p99 %.0f, max %.0f; the POST p50 %.0f ms, p99 %.0f, max %.0f",
                stages.count(), isClientDrill() ? ", client 0 left out" : "",
                stages.toBatch()[0], stages.toBatch()[1], stages.toBatch()[2], stages.toPost()[0], stages.toPost()[1],
                stages.toPost()[2], stages.post()[0], stages.post()[1], stages.post()[2]));
    }

    private boolean isClientDrill() {
        return o.drill() == Drill.HANGING_CLIENT || o.drill() == Drill.FAILING_CLIENT;
    }

    private Map<String, Object> notificationFigures(NotificationCheck.Verdict n, long[] steady, ServiceRun run) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", n.ok());
        m.put("clients", o.clients());
        m.put("links_per_client", o.links());
        m.put("expected", n.expected());
        m.put("delivered_once", n.delivered());
        m.put("superseded", n.superseded());
        m.put("superseded_by_reason", n.supersededByReason());
        m.put("requests", run.webhookRequests());
        m.put("redeliveries", n.redeliveries());
        m.put("problems", n.problems());
        m.put("first_problems", n.firstProblems());
        m.put("statuses", n.statuses());
        for (var e : Map.of("steady_state", steady, "all", n.latenciesMs()).entrySet()) {
            Map<String, Object> l = new LinkedHashMap<>();
            l.put("count", e.getValue().length);
            for (double q : new double[] {0.5, 0.95, 0.99, 1}) {
                l.put(q == 1 ? "max_ms" : "p" + Math.round(q * 100) + "_ms", NotificationCheck.quantile(e.getValue(), q));
            }
            m.put("latency_" + e.getKey(), l);
        }
        if (stages != null) {
            Map<String, Object> st = new LinkedHashMap<>();
            st.put("count", stages.count());
            st.put("client_0_left_out", isClientDrill());
            for (var e : Map.of("to_batch", stages.toBatch(), "to_post", stages.toPost(), "post", stages.post()).entrySet()) {
                st.put(e.getKey() + "_ms", Map.of("p50", e.getValue()[0], "p99", e.getValue()[1], "max", e.getValue()[2]));
            }
            m.put("stages_steady_state", st);
            if (slowest != null) {
                m.put("slowest_one_percent", slowest.figures());
            }
        }
        return m;
    }

    /**
     * History lag in seconds per sample: how long ago the service had applied as many readings as it has now
     * written to history. Returns the maximum and the median over [from, to].
     */
    private static double[] historyLag(List<Sampler.Sample> samples, double from, double to) {
        List<Double> lags = new ArrayList<>();
        for (int i = 0; i < samples.size(); i++) {
            Sampler.Sample s = samples.get(i);
            if (s.at() < from || s.at() > to || s.historyWritten() < 0) {
                continue;
            }
            int j = i;
            while (j > 0 && samples.get(j).consumed() > s.historyWritten()) {
                j--;
            }
            lags.add(s.at() - samples.get(j).at());
        }
        return new double[] {lags.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN), Stats.median(lags)};
    }

    /** Readings per second (published, applied, written to history) above, notification latency below. */
    private void plot(Path png, ServiceRun run, RawCeiling.Result ceiling) {
        List<Sampler.Sample> samples = run.samples();
        List<double[]> published = new ArrayList<>(), applied = new ArrayList<>(), written = new ArrayList<>();
        List<double[]> ceilingLine = List.of(new double[] {0, ceiling.consumedPerSecond()},
                new double[] {run.publishSeconds(), ceiling.consumedPerSecond()});
        for (int i = 1; i < samples.size(); i++) {
            Sampler.Sample a = samples.get(i - 1), b = samples.get(i);
            double dt = b.at() - a.at();
            published.add(new double[] {b.at(), (b.published() - a.published()) / dt});
            applied.add(new double[] {b.at(), (b.consumed() - a.consumed()) / dt});
            written.add(new double[] {b.at(), (b.historyWritten() - a.historyWritten()) / dt});
        }
        Map<Long, List<Long>> bySecond = new java.util.TreeMap<>();
        for (Webhooks.Arrival a : run.arrivals()) {
            bySecond.computeIfAbsent((a.arrivedAtMs() - run.startMillis()) / 1000, k -> new ArrayList<>()).add(a.latencyMs());
        }
        List<double[]> p50 = new ArrayList<>(), p99 = new ArrayList<>();
        bySecond.forEach((second, values) -> {
            long[] sorted = values.stream().mapToLong(Long::longValue).sorted().toArray();
            p50.add(new double[] {second + 0.5, NotificationCheck.quantile(sorted, 0.5)});
            p99.add(new double[] {second + 0.5, NotificationCheck.quantile(sorted, 0.99)});
        });
        String title = String.format(Locale.US, "lockwatch %s: %,d sensors, %,d clients x %,d links, %.1f%% changes, rate %s",
                REVISION, o.sensors(), o.clients(), o.links(), o.changes() * 100,
                o.rate() == 0 ? "as fast as possible" : fmt(o.rate()) + "/s");
        try {
            List<Plot.Series> rates = new ArrayList<>(List.of(
                    new Plot.Series("published", new java.awt.Color(120, 120, 120), published),
                    new Plot.Series("applied (state)", new java.awt.Color(31, 119, 180), applied),
                    new Plot.Series("written to history", new java.awt.Color(44, 160, 44), written)));
            if (o.rate() == 0) {
                // at a set rate the ceiling would only flatten the lines that matter
                rates.add(new Plot.Series("raw ceiling", new java.awt.Color(214, 39, 40), ceilingLine));
            }
            Plot.write(png, title, "readings/s", rates,
                    "notification latency, ms (by second of arrival)",
                    List.of(new Plot.Series("p50", new java.awt.Color(31, 119, 180), p50),
                            new Plot.Series("p99", new java.awt.Color(255, 127, 14), p99)),
                    new double[] {o.warmup(), run.publishSeconds()});
        } catch (Exception | Error e) {
            log("plot not written: %s", e);
        }
    }

    private static String ms(double value) {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.US, "%,.0f", value);
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
            m.put("history_written", x.historyWritten());
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
