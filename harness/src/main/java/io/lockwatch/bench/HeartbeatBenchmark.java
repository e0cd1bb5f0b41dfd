package io.lockwatch.bench;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.ConnectionFactory;

/**
 * Benchmark of lockwatch's heartbeat at scale against the real RabbitMQ, PostgreSQL and ClickHouse (run it with
 * {@code scripts/bench-heartbeat.sh}, which documents the options): many registered sensors, of which a part fall
 * silent at one moment while the others keep reporting. It measures, per silent sensor, how long after its
 * timeout expired its {@code sensor.connection_lost} event became visible, checks that every silent sensor got
 * exactly one and no other sensor any, and asserts no timing.
 *
 * <p>With {@code --alarm} it measures open-door alarms the same way (issue 19): the chosen sensors open their door
 * (data 0) at one moment T and report nothing more, with {@code open_alarm_seconds} = {@code --timeout}; each
 * {@code sensor.alarm_raised} is timed from T + threshold, exactly one per door and none for any other sensor is
 * checked, and {@code --restore} doors then close, each of which must get exactly one {@code sensor.alarm_cleared}.
 *
 * <ol>
 *   <li>starts the service ({@link ServiceProcess}, its own virtual host and databases) and registers the
 *       sensors ({@link BenchDatabase}); the silent ones, chosen at random, get their own timeout, as
 *       registering them with one would;</li>
 *   <li>brings the others online through ingest: one reading each, and waits until all are applied;</li>
 *   <li>from then on publishes readings to the others at a steady rate, until the end;</li>
 *   <li>the silent sensors send one reading each, all measured at the same moment T, as fast as the broker
 *       takes them; then nothing more: their timeout expires at T + timeout;</li>
 *   <li>follows the lost events as they become visible (a poll every {@value #POLL_MS} ms), until all are there
 *       or {@code --max-wait} has passed; waits two more scans (a duplicate would show);</li>
 *   <li>sends one reading to some of the lost sensors and waits for them to be online again;</li>
 *   <li>stops publishing, waits until ingest has applied everything, then checks every connectivity event and
 *       every sensor's connectivity in PostgreSQL against what was published;</li>
 *   <li>prints a summary and writes the figures to {@code target/bench/heartbeat-<timestamp>.json}.</li>
 * </ol>
 */
public final class HeartbeatBenchmark {

    static final String EXCHANGE = PipelineBenchmark.EXCHANGE;
    static final String QUEUE = PipelineBenchmark.QUEUE;
    /** How often the lost events are looked for: the resolution of "visible at". */
    static final int POLL_MS = 100;
    /** Probability that a reading of a sensor already heard from flips its data. */
    private static final double CHANGES = 0.01;
    /** --phase worst: the silent sensors' timeout expires this long after a scan fired. */
    static final long AFTER_SCAN_MS = 500;
    private static final String REVISION = System.getProperty("bench.revision", "unknown");

    private final HeartbeatOptions o;
    private HeartbeatExtras extras;
    private final String stamp = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'"));

    /** The event measured and the one that ends it: lost and restored, or an alarm raised and cleared. */
    private final String first;
    private final String again;
    /** How the report calls the measured event, and the deadline it is timed from. */
    private final String noun;
    private final String deadline;

    private HeartbeatBenchmark(HeartbeatOptions options) {
        this.o = options;
        this.first = o.alarm() ? HeartbeatDatabase.ALARM_RAISED : HeartbeatDatabase.LOST;
        this.again = o.alarm() ? HeartbeatDatabase.ALARM_CLEARED : HeartbeatDatabase.RESTORED;
        this.noun = o.alarm() ? "alarm" : "lost event";
        this.deadline = o.alarm() ? "threshold" : "timeout";
    }

    public static void main(String[] args) {
        Mains.run(args, HeartbeatOptions::parse, HeartbeatOptions.USAGE, options -> new HeartbeatBenchmark(options).run());
    }

    private int run() throws Exception {
        Files.createDirectories(o.outDir());
        log("%,d sensors, %,d of them %s from one moment on (own %s %d s), the others %s readings/s, scan every %d s, seed %d",
                o.sensors(), o.silent(), o.alarm() ? "with their door open" : "silent", deadline, o.timeout(),
                o.rate() == 0 ? "as many" : fmt(o.rate()), o.scanInterval(), o.seed());
        log("RabbitMQ %s, PostgreSQL %s, ClickHouse %s", o.amqpUri().replaceAll("//[^@]*@", "//"), o.jdbcUrl(),
                o.clickHouseUrl());
        ConnectionFactory amqp = Broker.factory(o.amqpUri());
        try (Broker broker = new Broker(amqp)) {
            AMQP.Queue.DeclareOk queue = broker.inspect(QUEUE);
            if (queue != null) {
                if (queue.getConsumerCount() > 0) {
                    throw new IllegalStateException(QUEUE + " already has " + queue.getConsumerCount()
                            + " consumer(s): another lockwatch runs against this virtual host; stop it first");
                }
                broker.purge(QUEUE);
            }
            Path serviceLog = o.outDir().resolve(o.alarm() ? "alarms-service.log" : "heartbeat-service.log");
            ServiceProcess service = ServiceProcess.start(o.jar(), List.of(), o.serviceArguments(), serviceLog,
                    o.outDir().resolve("service.pid"));
            Thread hook = new Thread(service::close, "bench-stop-service");
            Runtime.getRuntime().addShutdownHook(hook);
            log("service started (pid %d, %s, log %s)", service.pid(), service.baseUri(), serviceLog);
            try {
                return measure(service, broker, amqp);
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

    private int measure(ServiceProcess service, Broker broker, ConnectionFactory amqp) throws Exception {
        long t0 = System.nanoTime();
        service.awaitHealthy(Duration.ofMinutes(3));
        log("service healthy after %.1f s", (System.nanoTime() - t0) / 1e9);
        AMQP.Queue.DeclareOk queue = broker.inspect(QUEUE);
        if (queue == null || queue.getConsumerCount() != 1) {
            throw new IllegalStateException("expected the service as the one consumer of " + QUEUE + ", found "
                    + (queue == null ? "no queue" : queue.getConsumerCount() + " consumers"));
        }
        BenchDatabase bench = new BenchDatabase(o.jdbcUrl(), o.dbUser(), o.dbPassword());
        HeartbeatDatabase db = new HeartbeatDatabase(o.jdbcUrl(), o.dbUser(), o.dbPassword());

        log("registering %,d sensors (TRUNCATE sensors, clients, sensor_events, alarms CASCADE; one INSERT ... SELECT)", o.sensors());
        long rows = bench.registerSensors(o.sensors());
        if (rows != o.sensors()) {
            throw new IllegalStateException("sensor_state has " + rows + " rows after registering " + o.sensors());
        }
        broker.purge(QUEUE);

        Run run = new Run(o.sensors(), o.seed());
        run.choose(o.silent());
        int updated = o.alarm() ? db.setOpenAlarm(run.ids(run.silent), o.timeout()) : db.setTimeout(run.ids(run.silent), o.timeout());
        if (updated != o.silent()) {
            throw new IllegalStateException("gave " + updated + " sensors their own " + deadline + ", expected " + o.silent());
        }
        log("%,d %s chosen at random, %s = %d", o.silent(), o.alarm() ? "doors" : "silent sensors",
                o.alarm() ? "open_alarm_seconds" : "heartbeat_timeout_seconds", o.timeout());
        extras = new HeartbeatExtras(o, db);
        extras.prepare(run.ids(run.silent));

        PrometheusScraper prometheus = new PrometheusScraper(service.baseUri());
        CpuSampler cpu = new CpuSampler(service.pid());
        double receivedAtStart = prometheus.scrape().sum(PrometheusScraper.RECEIVED);
        try (Publisher steady = new Publisher(amqp, EXCHANGE, "lockwatch-hbbench-others", o.confirmWindow());
             Publisher burst = new Publisher(amqp, EXCHANGE, "lockwatch-hbbench-silent", o.confirmWindow())) {

            log("bringing the other %,d sensors online: one reading each, through ingest", run.others.length);
            long seedStart = System.nanoTime();
            for (int sensor : run.others) {
                steady.publish(run.othersSource.first(sensor));
            }
            steady.awaitConfirms();
            requireApplied(prometheus, receivedAtStart + run.others.length, service, "first readings");
            run.seedSeconds = (System.nanoTime() - seedStart) / 1e9;
            log("%,d sensors online after %.1f s (%s readings/s)", run.others.length, run.seedSeconds,
                    fmt(run.others.length / run.seedSeconds));

            // one meter at a time from /actuator/metrics: a Prometheus scrape would also run the service's gauges,
            // among them a count of the lost sensors, every second, on the database being measured
            MeterReader meters = new MeterReader(service.baseUri());
            Sampler sampler = new Sampler(() -> new Sampler.Observation(
                    (long) meters.value("lockwatch.readings.received"), meters.value("jvm.memory.used", "area:heap")),
                    () -> steady.published() + burst.published(), () -> broker.depth(QUEUE), cpu);
            run.samplerStart = System.currentTimeMillis();
            sampler.start();
            SteadyStream others = new SteadyStream(steady, run);
            others.start();
            LostEventWatch watch = null;
            Diagnostics diagnostics = null;
            try {
                publishSilentOnce(run, burst, db);
                watch = new LostEventWatch(db, first);
                watch.start();
                if (o.diagnostics()) {
                    diagnostics = new Diagnostics(bench, o.outDir().resolve("heartbeat-diagnostics-" + stamp + ".txt"));
                    diagnostics.startAt(run.expiry - 1000);
                }
                awaitLost(run, watch, service);
                extras.afterRaised(run.silent.length);
                if (diagnostics != null) {
                    diagnostics.stop();
                }
                log("waiting two more scans (%d s): a second %s would show", 2 * o.scanInterval(), noun);
                Thread.sleep(2000L * o.scanInterval() + 1000);
                restore(run, watch, burst, db, service);
                extras.afterRestored(run.silent.length - run.restored.length, run.restored.length);
            } finally {
                others.stop();
                if (diagnostics != null) {
                    diagnostics.stop();
                }
                if (watch != null) {
                    watch.stop();
                }
            }
            steady.awaitConfirms();
            burst.awaitConfirms();
            long published = run.others.length + burst.published() + others.published();
            log("stopped publishing; waiting until ingest has applied all %,d readings", published);
            requireApplied(prometheus, receivedAtStart + published, service, "readings");
            sampler.close();
            run.samples = sampler.samples();
            run.steadyPublished = others.published();
            run.nacked = steady.nacked() + burst.nacked();
            if (others.failure() != null) {
                throw new IllegalStateException("publishing to the other sensors failed", others.failure());
            }
            run.visibleAt = watch.visibleAt();
            run.timeline = watch.timeline();
            run.followerFailure = watch.failure();
        }

        log(o.alarm() ? "checking every alarm event and the alarms in PostgreSQL"
                : "checking every connectivity event and every sensor's connectivity in PostgreSQL");
        Verdict verdict = verify(run, db);
        report(run, verdict, cpu.topOthers(5));
        return verdict.ok() && extras.ok() ? 0 : 1;
    }

    // --- the phases

    /** The silent sensors' one reading each, all measured at one moment; returns once all are online. */
    private void publishSilentOnce(Run run, Publisher burst, HeartbeatDatabase db) throws Exception {
        run.silentAt = o.worstPhase() ? awaitWorstPhase(run, db) : System.currentTimeMillis();
        log(o.alarm() ? "the %,d doors open, all measured at T = %s, then report nothing more"
                : "the %,d silent sensors report once, all measured at T = %s, then fall silent", run.silent.length,
                Instant.ofEpochMilli(run.silentAt));
        for (int sensor : run.silent) {
            burst.publish(o.alarm() ? run.silentSource.first(sensor, run.silentAt, 0) : run.silentSource.first(sensor, run.silentAt));
        }
        burst.awaitConfirms();
        run.expiry = run.silentAt + deadlineMillis();
        for (int sensor : run.silent) {
            run.expiryOf.put(sensor, run.silentSource.reference().lastTs(sensor) + deadlineMillis());
        }
        log("published in %.1f s; waiting until they are all online", (System.currentTimeMillis() - run.silentAt) / 1e3);
        List<String> ids = run.ids(run.silent);
        while (true) {
            long online = db.countOnline(ids);
            if (online == run.silent.length) {
                break;
            }
            if (System.currentTimeMillis() > run.expiry) {
                log("WARNING: only %,d of the %,d silent sensors were online when their timeout expired", online,
                        run.silent.length);
                break;
            }
            Thread.sleep(500);
        }
        run.silentAppliedAfter = (System.currentTimeMillis() - run.silentAt) / 1e3;
        log("all online %.1f s after T; their %s expires at T + %d s", run.silentAppliedAfter, deadline, o.timeout());
    }

    /**
     * Waits for the moment T at which the silent sensors should report so that their timeout expires
     * {@value #AFTER_SCAN_MS} ms after a scan fired: that scan just misses them, and they wait for the next, a
     * whole interval later (Quartz's trigger fires at fixed times, read from its job store).
     *
     * @return T
     */
    private long awaitWorstPhase(Run run, HeartbeatDatabase db) throws Exception {
        HeartbeatDatabase.ScanSchedule schedule = db.scanSchedule(o.alarm() ? "alarm-scan" : "heartbeat-scan");
        long now = System.currentTimeMillis();
        if (schedule == null) {
            run.phase = "left to chance (no scan trigger found in Quartz's tables)";
            log("WARNING: the phase is %s", run.phase);
            return now;
        }
        long base = schedule.nextFire() + AFTER_SCAN_MS - deadlineMillis();
        long t = base + Math.floorDiv(now - base + schedule.interval() - 1, schedule.interval()) * schedule.interval();
        run.phase = String.format(Locale.US, "the %s expires %.1f s after a scan fired (the unluckiest phase: "
                + "they wait a whole interval for the next)", deadline, AFTER_SCAN_MS / 1e3);
        log("waiting %.1f s so that %s", (t - now) / 1e3, run.phase);
        Thread.sleep(Math.max(0, t - System.currentTimeMillis()));
        return t;
    }

    /**
     * From a silent sensor's last reading (an open door's opening) to its event: the timeout plus the last-seen
     * tolerance (1% of it, at most 30 s: the service writes a repeat's last-seen time only once it moved that much,
     * and declares a sensor lost only after timeout + tolerance, never early); an alarm's threshold exactly. The
     * rule as README states it: the harness runs apart from the service's classes.
     */
    private long deadlineMillis() {
        long millis = o.timeout() * 1000L;
        return o.alarm() ? millis : millis + Math.min(millis / 100, 30_000);
    }

    /** Waits until every silent sensor's lost event is visible, or --max-wait after the timeout expired. */
    private void awaitLost(Run run, LostEventWatch watch, ServiceProcess service) throws Exception {
        long giveUp = run.expiry + o.maxWait() * 1000L;
        long nextLog = run.expiry;
        while (true) {
            long now = System.currentTimeMillis();
            int seen = watch.count();
            if (seen >= run.silent.length) {
                log("T + %.1f s: all %,d %ss visible", (now - run.silentAt) / 1e3, seen, noun);
                return;
            }
            if (now > giveUp) {
                log("WARNING: only %,d of %,d %ss visible %d s after the %s expired; giving up",
                        seen, run.silent.length, noun, o.maxWait(), deadline);
                return;
            }
            if (!service.isAlive()) {
                throw new IllegalStateException("the service died; see its log");
            }
            if (watch.failure() != null) {
                throw new IllegalStateException("following the " + noun + "s failed", watch.failure());
            }
            if (now >= nextLog) {
                log("T + %.0f s: %,d %ss visible", (now - run.silentAt) / 1e3, seen, noun);
                nextLog = now + 5000;
            }
            Thread.sleep(200);
        }
    }

    /** One reading to some of the lost sensors; returns once they are online again. */
    private void restore(Run run, LostEventWatch watch, Publisher burst, HeartbeatDatabase db, ServiceProcess service)
            throws Exception {
        if (o.restore() == 0) {
            return;
        }
        Map<String, Long> visible = watch.visibleAt();
        List<Integer> chosen = new ArrayList<>();
        for (int sensor : run.silent) { // in random order already
            if (chosen.size() == o.restore()) {
                break;
            }
            if (visible.containsKey(run.silentSource.reference().id(sensor))) {
                chosen.add(sensor);
            }
        }
        run.restored = chosen.stream().mapToInt(Integer::intValue).toArray();
        log(o.alarm() ? "%,d alarmed doors close (one reading each)" : "%,d lost sensors report again (one reading each)",
                run.restored.length);
        for (int sensor : run.restored) {
            burst.publish(o.alarm() ? run.silentSource.next(sensor, 1) : run.silentSource.next(sensor));
            run.restoredAt.put(sensor, run.silentSource.reference().lastTs(sensor));
        }
        burst.awaitConfirms();
        List<String> ids = run.ids(run.restored);
        long giveUp = System.currentTimeMillis() + 60_000;
        long online;
        while ((online = o.alarm() ? db.countState(ids, 1) : db.countOnline(ids)) < run.restored.length
                && System.currentTimeMillis() < giveUp) {
            if (!service.isAlive()) {
                throw new IllegalStateException("the service died; see its log");
            }
            Thread.sleep(200);
        }
        if (o.alarm()) {
            // the clearings come with the next scan that finds the doors closed: waited for, not slept on
            long closedAt = System.currentTimeMillis();
            long cleared;
            while ((cleared = db.countEvents(again)) < run.restored.length && System.currentTimeMillis() < giveUp + 60_000) {
                Thread.sleep(200);
            }
            log("%,d of %,d closed; %,d alarms cleared %.1f s later", online, run.restored.length, cleared,
                    (System.currentTimeMillis() - closedAt) / 1e3);
            return;
        }
        log("%,d of %,d %s; waiting one more scan (%d s)", online, run.restored.length,
                o.alarm() ? "closed" : "online again", o.scanInterval());
        Thread.sleep(1000L * o.scanInterval() + 1000);
    }

    private static void requireApplied(PrometheusScraper prometheus, double target, ServiceProcess service, String what)
            throws Exception {
        double applied = PipelineBenchmark.awaitApplied(prometheus, target, service);
        if (applied < target) {
            throw new IllegalStateException("the service stopped applying " + what + ", " + (long) (target - applied)
                    + " short of what was published");
        }
    }

    // --- the check

    private Verdict verify(Run run, HeartbeatDatabase db) throws Exception {
        Verdict v = new Verdict();
        Reference silentRef = run.silentSource.reference();
        Map<Integer, Integer> lostFirst = new HashMap<>();
        Map<Integer, Integer> lostAgain = new HashMap<>();
        Map<Integer, Integer> restoredEvents = new HashMap<>();
        // with a maintenance window, the losses it held (marked); what it sent at its end is checked by the extras
        db.forEachEvent(first, again, o.maintenance(), e -> {
            int sensor = silentRef.indexOf(e.sensorId());
            if (sensor < 0) {
                v.problem("an event of an unknown sensor: " + e);
                return;
            }
            boolean silent = run.expiryOf.containsKey(sensor);
            if (first.equals(e.type())) {
                v.lostEvents++;
                if (!silent) {
                    v.lostOfOthers++;
                    v.problem(noun + " of a sensor that kept reporting: " + e);
                } else if (e.occurredAt() == run.expiryOf.get(sensor)) {
                    if (lostFirst.merge(sensor, 1, Integer::sum) > 1) {
                        v.duplicates++;
                        v.problem("second " + noun + " for one " + (o.alarm() ? "opening" : "silence") + ": " + e);
                    }
                    Long visibleAt = run.visibleAt.get(e.sensorId());
                    if (visibleAt == null) {
                        v.notFollowed++;
                    } else {
                        v.visibleLatency.add((visibleAt - e.occurredAt()) / 1e3);
                    }
                    v.recordedLatency.add((e.recordedAt() - e.occurredAt()) / 1e3);
                    v.scanTransactions.merge(e.recordedAt(), 1, Integer::sum);
                    v.firstVisible = Math.min(v.firstVisible, visibleAt == null ? Long.MAX_VALUE : visibleAt);
                    v.lastVisible = Math.max(v.lastVisible, visibleAt == null ? Long.MIN_VALUE : visibleAt);
                } else if (run.restoredAt.containsKey(sensor)
                        && e.occurredAt() == run.restoredAt.get(sensor) + deadlineMillis()) {
                    // silent again after its restoring reading, for longer than its timeout: a new silence
                    if (lostAgain.merge(sensor, 1, Integer::sum) > 1) {
                        v.duplicates++;
                        v.problem("second lost event for one silence: " + e);
                    }
                } else {
                    v.wrongTime++;
                    v.problem(noun + " at " + e.occurredAt() + ", expected " + run.expiryOf.get(sensor)
                            + " (last reading + " + deadline + "): " + e);
                }
            } else {
                v.restoredEvents++;
                Long at = run.restoredAt.get(sensor);
                if (at == null || e.occurredAt() != at) {
                    v.problem("unexpected " + again + " event: " + e);
                } else if (restoredEvents.merge(sensor, 1, Integer::sum) > 1) {
                    v.duplicates++;
                    v.problem("second " + again + " event: " + e);
                }
            }
        });
        for (int sensor : run.silent) {
            if (!lostFirst.containsKey(sensor)) {
                v.missing++;
                v.problem("no " + noun + " for " + (o.alarm() ? "open door " : "silent sensor ") + silentRef.id(sensor));
            }
        }
        for (int sensor : run.restored) {
            if (!restoredEvents.containsKey(sensor)) {
                v.problem("no " + again + " event for sensor " + silentRef.id(sensor));
            }
        }
        v.restoredOk = restoredEvents.size();

        if (o.alarm()) {
            // alarms now: active exactly for the doors that stayed open
            long active = db.countActiveAlarms();
            if (active != run.silent.length - run.restored.length) {
                v.problem(active + " active alarms, expected " + (run.silent.length - run.restored.length));
            }
        } else {
            checkConnectivity(run, v, lostAgain, db);
        }

        // and ingest stayed exact meanwhile: one state change event per change of data
        long expectedChanges = run.othersSource.reference().totalChanges() + silentRef.totalChanges();
        v.stateChanges = db.countEvents("sensor.state_changed");
        v.expectedStateChanges = expectedChanges;
        if (v.stateChanges != expectedChanges) {
            v.problem("sensor_events has " + v.stateChanges + " state changes, expected " + expectedChanges);
        }
        return v;
    }

    /** Connectivity now: lost exactly for the silent sensors not restored (or lost again after restoring). */
    private void checkConnectivity(Run run, Verdict v, Map<Integer, Integer> lostAgain, HeartbeatDatabase db)
            throws Exception {
        Reference silentRef = run.silentSource.reference();
        Map<Integer, String> notOnline = new HashMap<>();
        db.forEachNotOnline((id, connectivity) -> notOnline.put(silentRef.indexOf(id), connectivity));
        for (int sensor : run.silent) {
            boolean back = run.restoredAt.containsKey(sensor) && !lostAgain.containsKey(sensor);
            String now = notOnline.remove(sensor);
            String expected = back ? null : "lost";
            if (!Objects.equals(now, expected)) {
                v.problem("sensor " + silentRef.id(sensor) + " is " + (now == null ? "online" : now) + ", expected "
                        + (expected == null ? "online" : expected));
            }
        }
        notOnline.forEach((sensor, connectivity) -> v.problem("sensor " + (sensor < 0 ? "?" : silentRef.id(sensor))
                + " kept reporting but is " + connectivity));
    }

    // --- the report

    private void report(Run run, Verdict v, Map<String, Double> others) throws IOException {
        double bound = o.scanInterval() + 5;
        long overBound = v.visibleLatency.stream().filter(s -> s > bound).count();
        long over60 = v.visibleLatency.stream().filter(s -> s > 60).count();
        double[] visible = sorted(v.visibleLatency);
        double[] recorded = sorted(v.recordedLatency);
        double firstToLast = v.visibleLatency.isEmpty() ? Double.NaN : (v.lastVisible - v.firstVisible) / 1e3;

        // the detection window: from the timeout's expiry to the last lost event (one scan interval at least)
        double from = (run.expiry - run.samplerStart) / 1e3;
        double to = Math.max(from + o.scanInterval(),
                ((v.visibleLatency.isEmpty() ? run.expiry : v.lastVisible) - run.samplerStart) / 1e3);
        // steady state before: from the silent sensors being online to the expiry
        double before = run.silentAt - run.samplerStart + run.silentAppliedAfter * 1000;
        Window during = window(run.samples, from, to);
        Window beforeExpiry = window(run.samples, before / 1e3 + 1, from);

        String target = v.visibleLatency.isEmpty() ? "n/a"
                : over60 == 0 && v.missing == 0 ? "MET (all within 60 s)" : "MISSED (" + (over60 + v.missing) + " later than 60 s or missing)";
        String correctness = v.ok()
                ? String.format(Locale.US, "OK: exactly one %s for each of the %,d %s, none for the other %,d, no duplicate; "
                        + "%s exactly once: %,d of %,d", noun, run.silent.length, o.alarm() ? "open doors" : "silent sensors",
                        run.others.length, o.alarm() ? "cleared on closing" : "restored", v.restoredOk, run.restored.length)
                : String.format(Locale.US, "FAILED: %,d problems (missing %,d, duplicates %,d, %ss of other sensors %,d, wrong time %,d)",
                        v.problems, v.missing, v.duplicates, noun, v.lostOfOthers, v.wrongTime);

        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.US, "%s at scale: %,d sensors, %,d %s from T on (own %s %d s), the other %,d at %s readings/s throughout, scan every %d s",
                o.alarm() ? "open-door alarms" : "heartbeat", o.sensors(), run.silent.length, o.alarm() ? "doors open" : "silent",
                deadline, o.timeout(), run.others.length, o.rate() == 0 ? "as many" : fmt(o.rate()), o.scanInterval()));
        lines.add(String.format(Locale.US, "%s visible after the %s expired: n=%,d  p50 %s  p99 %s  max %s   target <= 60 s: %s",
                noun, deadline, visible.length, sec(pct(visible, 50)), sec(pct(visible, 99)), sec(max(visible)), target));
        lines.add(String.format(Locale.US, "first to last %s: %s; within %s + scan interval + 5 s (%.0f s): %,d of %,d; phase: %s",
                noun, sec(firstToLast), deadline, bound, visible.length - overBound, visible.length, run.phase));
        lines.add(String.format(Locale.US, "ingest during detection (T+%d s .. last %s): applied median %s/s, min %s/s, published %s/s, queue max %,d; before: %s/s",
                o.timeout(), noun, fmt(during.appliedMedian), fmt(during.appliedMin), fmt(during.publishedMedian), during.queueMax,
                fmt(beforeExpiry.appliedMedian)));
        lines.add("correctness: " + correctness);
        lines.addAll(extras.lines());
        v.shown.forEach(p -> lines.add("  problem: " + p));
        lines.add("");
        lines.add(String.format(Locale.US, "  by the scan's own clock (recorded_at = start of its transaction): p50 %s  p99 %s  max %s; scan transactions: %d (%s)",
                sec(pct(recorded, 50)), sec(pct(recorded, 99)), sec(max(recorded)), v.scanTransactions.size(), transactions(v.scanTransactions, run.expiry)));
        lines.add(String.format(Locale.US, "  visible = first poll (every %d ms) that saw the event; %,d %ss not seen by the poll%s",
                POLL_MS, v.notFollowed, noun, run.followerFailure == null ? "" : " (it failed: " + run.followerFailure + ")"));
        lines.add(String.format(Locale.US, "  %s readings published and applied %.1f s after T; the others came online in %.1f s (%s readings/s)",
                o.alarm() ? "the doors'" : "silent sensors'", run.silentAppliedAfter, run.seedSeconds, fmt(run.others.length / run.seedSeconds)));
        lines.add("  CPU cores during detection: " + cpuLine(during.cpu) + "; service heap max " + String.format(Locale.US, "%.0f MB", during.heapMax / 1048576));
        lines.add(String.format(Locale.US, "  events: %,d %s, %,d %s, %,d state changes (expected %,d); readings to the others during the run: %,d%s",
                v.lostEvents, first, v.restoredEvents, again, v.stateChanges, v.expectedStateChanges, run.steadyPublished,
                run.nacked > 0 ? String.format(Locale.US, "; WARNING: %,d nacked by the broker", run.nacked) : ""));
        if (during.cpu.getOrDefault(CpuSampler.OTHER, 0.0) > 0.25) {
            lines.add(String.format(Locale.US, "  WARNING: other processes used %.2f cores during detection; figures are disturbed (CPU seconds: %s)",
                    during.cpu.get(CpuSampler.OTHER), others));
        }
        Path json = o.outDir().resolve((o.alarm() ? "alarms-" : "heartbeat-") + stamp + ".json");
        lines.add("  revision: " + REVISION + (o.serviceArgs().isEmpty() ? "" : "; service arguments: " + String.join(" ", o.serviceArgs())));
        lines.add("  figures: " + json + "; service log: " + o.outDir().resolve(o.alarm() ? "alarms-service.log" : "heartbeat-service.log"));
        System.out.println();
        lines.forEach(System.out::println);

        Map<String, Object> options = new LinkedHashMap<>();
        options.put("sensors", o.sensors());
        options.put("silent", o.silent());
        options.put("timeout_s", o.timeout());
        options.put("rate", o.rate());
        options.put("scan_interval_s", o.scanInterval());
        options.put("phase", o.worstPhase() ? "worst" : "any");
        options.put("restore", o.restore());
        options.put("mode", o.alarm() ? "alarm" : "heartbeat");
        options.put("max_wait_s", o.maxWait());
        options.put("seed", o.seed());
        options.put("confirm_window", o.confirmWindow());
        options.put("service_args", o.serviceArgs());
        options.put("amqp", o.amqpUri().replaceAll("//[^@]*@", "//"));
        options.put("jdbc", o.jdbcUrl());
        options.put("clickhouse", o.clickHouseUrl());

        Map<String, Object> lost = new LinkedHashMap<>();
        lost.put("count", visible.length);
        lost.put("visible_after_expiry_s", percentiles(visible));
        lost.put("recorded_after_expiry_s", percentiles(recorded));
        lost.put("first_to_last_s", firstToLast);
        lost.put("phase", run.phase);
        lost.put("bound_s", bound);
        lost.put("over_bound", overBound);
        lost.put("over_60_s", over60);
        lost.put("target_met", over60 == 0 && v.missing == 0 && visible.length > 0);
        lost.put("not_followed", v.notFollowed);
        lost.put("scan_transactions", v.scanTransactions.size());
        lost.put("scan_transactions_detail", transactionList(v.scanTransactions, run.expiry));
        lost.put("timeline", run.timeline.stream().map(p -> List.<Object>of((p[0] - run.expiry) / 1e3, p[1])).toList());

        Map<String, Object> ingest = new LinkedHashMap<>();
        ingest.put("during_detection", during.toMap(to - from));
        ingest.put("before_expiry", beforeExpiry.toMap(from - before / 1e3 - 1));
        ingest.put("others_online_s", run.seedSeconds);
        ingest.put("silent_applied_after_t_s", run.silentAppliedAfter);
        ingest.put("published_to_others_during_run", run.steadyPublished);
        ingest.put("nacked", run.nacked);

        Map<String, Object> k = new LinkedHashMap<>();
        k.put("ok", v.ok());
        k.put("problems", v.problems);
        k.put("first_problems", v.shown);
        k.put("missing", v.missing);
        k.put("duplicates", v.duplicates);
        k.put("lost_of_reporting_sensors", v.lostOfOthers);
        k.put("lost_at_wrong_time", v.wrongTime);
        k.put("lost_events", v.lostEvents);
        k.put("restored_events", v.restoredEvents);
        k.put("restored_expected", run.restored.length);
        k.put("state_changes", v.stateChanges);
        k.put("state_changes_expected", v.expectedStateChanges);

        List<Object> samples = new ArrayList<>();
        for (Sampler.Sample s : run.samples) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("t", s.at() - (run.expiry - run.samplerStart) / 1e3);
            m.put("applied", s.consumed());
            m.put("published", s.published());
            m.put("queue_ready", s.queueReady());
            m.put("heap_mb", s.heapBytes() / 1048576);
            m.put("cpu_cores", s.cpuCores());
            samples.add(m);
        }

        Map<String, Object> all = new LinkedHashMap<>();
        all.put("timestamp", stamp);
        all.put("revision", REVISION);
        all.put("options", options);
        all.put("machine_cores", Runtime.getRuntime().availableProcessors());
        all.put(o.alarm() ? "alarm_raised" : "lost", lost);
        all.put("ingest", ingest);
        all.put("correctness", k);
        all.put("other_processes_cpu_s", others);
        all.put("samples_note", "t in seconds from the timeout's expiry (T + timeout)");
        all.put("samples", samples);
        Files.writeString(json, Json.write(all));
    }

    /** Figures of the per-second samples inside [from, to] (seconds since the sampler started). */
    private record Window(double appliedMedian, double appliedMin, double publishedMedian, long queueMax,
                          Map<String, Double> cpu, double heapMax) {

        Map<String, Object> toMap(double seconds) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("seconds", seconds);
            m.put("applied_per_s_median", appliedMedian);
            m.put("applied_per_s_min", appliedMin);
            m.put("published_per_s_median", publishedMedian);
            m.put("queue_ready_max", queueMax);
            m.put("cpu_cores_mean", cpu);
            m.put("heap_max_mb", heapMax / 1048576);
            return m;
        }
    }

    private static Window window(List<Sampler.Sample> samples, double from, double to) {
        List<Double> applied = Stats.rates(samples, Sampler.Sample::consumed, from, to);
        List<Double> published = Stats.rates(samples, Sampler.Sample::published, from, to);
        long queueMax = 0;
        List<Sampler.Sample> inside = new ArrayList<>();
        for (Sampler.Sample s : samples) {
            if (s.at() >= from && s.at() <= to) {
                queueMax = Math.max(queueMax, s.queueReady());
                inside.add(s);
            }
        }
        return new Window(Stats.median(applied), applied.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN),
                Stats.median(published), queueMax, Stats.meanCpu(samples, from, to), Stats.maxHeap(inside));
    }

    /** Scan transactions by their start, relative to the expiry: "+10.2 s: 10,000, ...". */
    private static String transactions(TreeMap<Long, Integer> byStart, long expiry) {
        StringBuilder sb = new StringBuilder();
        byStart.forEach((start, n) -> sb.append(sb.length() == 0 ? "" : ", ")
                .append(String.format(Locale.US, "+%.1f s: %,d", (start - expiry) / 1e3, n)));
        return sb.toString();
    }

    private static List<Object> transactionList(TreeMap<Long, Integer> byStart, long expiry) {
        List<Object> out = new ArrayList<>();
        byStart.forEach((start, n) -> out.add(List.<Object>of((start - expiry) / 1e3, n)));
        return out;
    }

    private static Map<String, Object> percentiles(double[] sorted) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("min", sorted.length == 0 ? Double.NaN : sorted[0]);
        m.put("p50", pct(sorted, 50));
        m.put("p90", pct(sorted, 90));
        m.put("p99", pct(sorted, 99));
        m.put("max", max(sorted));
        return m;
    }

    private static double[] sorted(List<Double> values) {
        double[] a = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(a);
        return a;
    }

    /** Nearest-rank percentile of sorted values. */
    private static double pct(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p / 100 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    private static double max(double[] sorted) {
        return sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1];
    }

    private static String cpuLine(Map<String, Double> cores) {
        StringBuilder sb = new StringBuilder();
        cores.forEach((group, value) -> sb.append(sb.length() == 0 ? "" : ", ")
                .append(group).append(' ').append(String.format(Locale.US, "%.2f", value)));
        return sb.append(" (of ").append(Runtime.getRuntime().availableProcessors()).append(')').toString();
    }

    private static String sec(double seconds) {
        return Double.isNaN(seconds) ? "n/a" : String.format(Locale.US, "%.1f s", seconds);
    }

    private static String fmt(double value) {
        return Double.isNaN(value) ? "n/a" : String.format(Locale.US, "%,.0f", value);
    }

    static void log(String format, Object... args) {
        System.out.println("[bench] " + String.format(Locale.US, format, args));
    }

    // --- state of one run

    /** The sensors of the run, who is silent, what was published, and what was observed. */
    private static final class Run {
        final SplittableRandom random;
        final int sensors;
        final ReadingSource othersSource;
        final ReadingSource silentSource;
        /** sensor indexes (as in {@link Reference}), in random order */
        int[] silent;
        int[] others;
        int[] restored = new int[0];
        final Map<Integer, Long> expiryOf = new HashMap<>();
        final Map<Integer, Long> restoredAt = new HashMap<>();
        String phase = "left to chance";
        long silentAt;
        long expiry;
        double silentAppliedAfter;
        double seedSeconds;
        long samplerStart;
        long steadyPublished;
        long nacked;
        List<Sampler.Sample> samples = List.of();
        Map<String, Long> visibleAt = Map.of();
        List<long[]> timeline = List.of();
        Throwable followerFailure;

        Run(int sensors, long seed) {
            this.sensors = sensors;
            this.random = new SplittableRandom(seed);
            // two references over the same ids, each used by one thread: the others' readings are published by
            // the steady stream while the silent sensors' are published from the main thread
            this.othersSource = new ReadingSource(new Reference(sensors), CHANGES, random.nextLong());
            this.silentSource = new ReadingSource(new Reference(sensors), CHANGES, random.nextLong());
        }

        void choose(int count) {
            int[] order = new int[sensors];
            for (int i = 0; i < sensors; i++) {
                order[i] = i;
            }
            for (int i = sensors - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            silent = Arrays.copyOfRange(order, 0, count);
            others = Arrays.copyOfRange(order, count, sensors);
        }

        List<String> ids(int[] sensorIndexes) {
            List<String> ids = new ArrayList<>(sensorIndexes.length);
            for (int s : sensorIndexes) {
                ids.add(Reference.sensorId(s));
            }
            return ids;
        }
    }

    /** What the check found. */
    private static final class Verdict {
        private static final int MAX_SHOWN = 10;
        long problems;
        final List<String> shown = new ArrayList<>();
        long missing, duplicates, lostOfOthers, wrongTime, notFollowed, lostEvents, restoredEvents, stateChanges,
                expectedStateChanges;
        int restoredOk;
        final List<Double> visibleLatency = new ArrayList<>();
        final List<Double> recordedLatency = new ArrayList<>();
        /** lost events per scan transaction, by its start (recorded_at) */
        final TreeMap<Long, Integer> scanTransactions = new TreeMap<>();
        long firstVisible = Long.MAX_VALUE, lastVisible = Long.MIN_VALUE;

        void problem(String description) {
            problems++;
            if (shown.size() < MAX_SHOWN) {
                shown.add(description);
            }
        }

        boolean ok() {
            return problems == 0;
        }
    }

    /** Reads single meters from the service's {@code /actuator/metrics/<name>}. */
    private static final class MeterReader {
        private static final Pattern VALUE =
                Pattern.compile("\"measurements\":\\[\\{\"statistic\":\"[A-Z_]+\",\"value\":([-+0-9.eE]+)");
        private final HttpClient http = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(2)).build();
        private final URI base;

        MeterReader(URI serviceBase) {
            this.base = serviceBase.resolve("/actuator/metrics/");
        }

        /** The meter's first measurement (a counter's count, a gauge's value), summed over the given tag. */
        double value(String name, String... tags) throws IOException, InterruptedException {
            StringBuilder query = new StringBuilder();
            for (String tag : tags) {
                query.append(query.length() == 0 ? "?" : "&").append("tag=")
                        .append(URLEncoder.encode(tag, StandardCharsets.UTF_8));
            }
            // /actuator/metrics needs a token since the doors were closed (only health and the scrape are open)
            HttpRequest request = HttpRequest.newBuilder(base.resolve(name + query))
                    .header("Authorization", "Bearer " + ServiceProcess.API_TOKEN)
                    .timeout(Duration.ofSeconds(10)).GET().build();
            HttpResponse<String> response = http.send(request,
                    HttpResponse.BodyHandlers.ofString());
            Matcher m = VALUE.matcher(response.body());
            if (response.statusCode() != 200 || !m.find()) {
                throw new IOException("GET " + request.uri() + ": HTTP " + response.statusCode());
            }
            return Double.parseDouble(m.group(1));
        }
    }

    // --- background work

    /** Readings to random other sensors at the steady rate, on a thread of its own, until stopped. */
    private final class SteadyStream {
        private final Publisher publisher;
        private final Run run;
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Thread thread;
        private final long publishedBefore;

        SteadyStream(Publisher publisher, Run run) {
            this.publisher = publisher;
            this.run = run;
            this.publishedBefore = publisher.published();
            this.thread = new Thread(this::publish, "bench-others");
        }

        private void publish() {
            SplittableRandom pick = run.random.split();
            try {
                while (!stop.get()) {
                    publisher.publishFor(() -> run.othersSource.next(run.others[pick.nextInt(run.others.length)]),
                            Duration.ofSeconds(1), o.rate());
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }

        void start() {
            thread.start();
        }

        void stop() throws InterruptedException {
            stop.set(true);
            thread.join();
        }

        long published() {
            return publisher.published() - publishedBefore;
        }

        Throwable failure() {
            return failure.get();
        }
    }

    /** Polls the lost events every {@value #POLL_MS} ms and notes when each became visible. */
    private static final class LostEventWatch {
        private final HeartbeatDatabase db;
        private final Map<String, Long> visibleAt = new HashMap<>();
        private final List<long[]> timeline = new ArrayList<>();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Thread thread = new Thread(this::follow, "bench-lost-events");
        private final String type;

        LostEventWatch(HeartbeatDatabase db, String type) {
            this.db = db;
            this.type = type;
        }

        void start() {
            thread.setDaemon(true);
            thread.start();
        }

        private void follow() {
            try (HeartbeatDatabase.LostEventFollower follower = db.new LostEventFollower(type)) {
                while (!stop.get()) {
                    long pollStart = System.currentTimeMillis();
                    List<HeartbeatDatabase.Event> events = follower.poll();
                    if (!events.isEmpty()) {
                        synchronized (this) {
                            for (HeartbeatDatabase.Event e : events) {
                                visibleAt.putIfAbsent(e.sensorId(), pollStart);
                            }
                            timeline.add(new long[] {pollStart, visibleAt.size()});
                        }
                    }
                    long rest = POLL_MS - (System.currentTimeMillis() - pollStart);
                    if (rest > 0) {
                        Thread.sleep(rest);
                    }
                }
            } catch (Throwable t) {
                failure.set(t);
            }
        }

        synchronized int count() {
            return visibleAt.size();
        }

        synchronized Map<String, Long> visibleAt() {
            return Map.copyOf(visibleAt);
        }

        synchronized List<long[]> timeline() {
            return List.copyOf(timeline);
        }

        Throwable failure() {
            return failure.get();
        }

        void stop() throws InterruptedException {
            stop.set(true);
            thread.join(5000);
        }
    }

    /** --diagnostics: PostgreSQL's sessions once a second, from a given moment until stopped, to a file. */
    private static final class Diagnostics {
        private final BenchDatabase db;
        private final Path file;
        private final AtomicBoolean stop = new AtomicBoolean();
        private Thread thread;

        Diagnostics(BenchDatabase db, Path file) {
            this.db = db;
            this.file = file;
        }

        void startAt(long epochMillis) {
            thread = new Thread(() -> {
                StringBuilder out = new StringBuilder();
                try {
                    long wait = epochMillis - System.currentTimeMillis();
                    if (wait > 0) {
                        Thread.sleep(wait);
                    }
                    while (!stop.get()) {
                        out.append("== pg_stat_activity at ").append(Instant.now()).append('\n')
                                .append(db.activity());
                        Thread.sleep(1000);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) {
                    out.append("diagnostics failed: ").append(e).append('\n');
                }
                try {
                    Files.writeString(file, out);
                    log("diagnostics written to %s", file);
                } catch (IOException e) {
                    log("diagnostics not written: %s", e);
                }
            }, "bench-diagnostics");
            thread.setDaemon(true);
            thread.start();
        }

        void stop() throws InterruptedException {
            if (stop.getAndSet(true) || thread == null) {
                return;
            }
            thread.interrupt();
            thread.join(5000);
        }
    }
}
