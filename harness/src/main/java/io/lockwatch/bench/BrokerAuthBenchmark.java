package io.lockwatch.bench;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * What RabbitMQ's questions about devices cost lockwatch ({@code POST /broker-auth/…}), with a registry of N devices:
 * how many it answers a second and the CPU of the service and of PostgreSQL per answer, against a yardstick measured
 * in the same run, {@code GET /actuator/health/liveness} (the same server, filters and connections, no question).
 * <p>
 * N sensors each get a credential of their own ({@link BenchDevices}). Phases, each {@code --duration} s with {@code --concurrency} keep-alive connections,
 * as the broker's HTTP client keeps them: the yardstick; {@code topic} questions (a random device, writing with its
 * own sensor's MQTT key), the one the broker asks for each device's publishes once its cached answer runs out;
 * {@code user} questions (a random device logging in with its secret), asked for each new MQTT connection. What the
 * broker will ask is a matter of its cache: with devices publishing every I s and the cache keeping answers T s,
 * about N / max(I, T) topic questions a second, which the summary sets beside the measured capacity.
 */
public final class BrokerAuthBenchmark {

    record Options(Path jar, Path out, int devices, int duration, int concurrency) {
        static final String USAGE = "usage: BrokerAuthBenchmark [--devices 100000] [--duration 20] [--concurrency 8]";

        static Options parse(String[] args) {
            CommandLine line = new CommandLine(args);
            return new Options(Path.of(line.text("--jar", "target/lockwatch-0.1.0-SNAPSHOT.jar")),
                    Path.of(line.text("--out", "target/bench")), line.integer("--devices", 100_000),
                    line.integer("--duration", 20), line.integer("--concurrency", 8));
        }
    }

    record Phase(String name, double perSecond, double p50Ms, double p99Ms, double serviceCores, double postgresCores,
                 double harnessCores, long refused) {
    }

    public static void main(String[] args) {
        Mains.run(args, Options::parse, Options.USAGE, BrokerAuthBenchmark::run);
    }

    static int run(Options o) throws Exception {
        Files.createDirectories(o.out());
        Path log = o.out().resolve("broker-auth-service.log");
        try (ServiceProcess service = ServiceProcess.start(o.jar(), List.of(), BenchDevices.serviceArguments(), log,
                o.out().resolve("service.pid"))) {
            service.awaitHealthy(Duration.ofMinutes(3));
            URI base = service.baseUri();
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String prefix = BenchDevices.prefix("BA");
            long made = System.nanoTime();
            String secret = BenchDevices.register(http, base, prefix, o.devices());
            System.out.printf("[bench] registry: %,d sensors with a credential each, made in %.1f s%n", o.devices(),
                    (System.nanoTime() - made) / 1e9);
            IntFunction<String> sensor = i -> prefix + i;

            CpuSampler cpu = new CpuSampler(service.pid());
            List<Phase> phases = new ArrayList<>();
            // warm the JIT and the connections first, unmeasured
            measure("warm-up", http, o, cpu, () -> post(base, "topic", topic(sensor, o.devices())));
            phases.add(measure("yardstick: GET /actuator/health/liveness", http, o, cpu,
                    () -> HttpRequest.newBuilder(base.resolve("/actuator/health/liveness")).GET().build()));
            phases.add(measure("topic: a device publishing with its own sensor's key", http, o, cpu,
                    () -> post(base, "topic", topic(sensor, o.devices()))));
            phases.add(measure("user: a device logging in with its secret", http, o, cpu,
                    () -> post(base, "user", "username=sensor." + sensor.apply(random(o.devices())) + "&password=" + secret)));
            report(o, phases);
            BenchDevices.remove(prefix);
        }
        return 0;
    }

    private static String topic(IntFunction<String> sensor, int devices) {
        String id = sensor.apply(random(devices));
        return "username=sensor." + id + "&vhost=%2F&resource=topic&name=amq.topic&permission=write&routing_key=lockwatch.readings." + id;
    }

    private static int random(int n) {
        return ThreadLocalRandom.current().nextInt(n);
    }

    private static HttpRequest post(URI base, String question, String form) {
        return HttpRequest.newBuilder(base.resolve("/broker-auth/" + question))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build();
    }

    private static Phase measure(String name, HttpClient http, Options o, CpuSampler cpu,
                                 java.util.function.Supplier<HttpRequest> requests) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong refused = new AtomicLong();
        List<long[]> latencies = new ArrayList<>();
        List<Thread> workers = new ArrayList<>();
        cpu.sample();
        long started = System.nanoTime();
        for (int w = 0; w < o.concurrency(); w++) {
            long[] mine = new long[4_000_000];
            latencies.add(mine);
            Thread t = new Thread(() -> {
                int n = 0;
                while (!stop.get()) {
                    long t0 = System.nanoTime();
                    try {
                        HttpResponse<String> r = http.send(requests.get(), HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() != 200 || r.body().equals("deny")) {
                            refused.incrementAndGet();
                        }
                    } catch (Exception e) {
                        refused.incrementAndGet();
                    }
                    if (n < mine.length - 1) {
                        mine[++n] = System.nanoTime() - t0;
                    }
                }
                mine[0] = n;
            }, "bench-" + w);
            t.start();
            workers.add(t);
        }
        Thread.sleep(o.duration() * 1000L);
        stop.set(true);
        for (Thread t : workers) {
            t.join();
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        Map<String, Double> cores = cpu.sample();
        long total = 0;
        for (long[] l : latencies) {
            total += l[0];
        }
        long[] all = new long[(int) total];
        int k = 0;
        for (long[] l : latencies) {
            System.arraycopy(l, 1, all, k, (int) l[0]);
            k += (int) l[0];
        }
        Arrays.sort(all);
        Phase p = new Phase(name, total / seconds, all.length == 0 ? 0 : all[all.length / 2] / 1e6,
                all.length == 0 ? 0 : all[(int) (all.length * 0.99)] / 1e6, cores.getOrDefault(CpuSampler.SERVICE, 0.0),
                cores.getOrDefault(CpuSampler.POSTGRESQL, 0.0), cores.getOrDefault(CpuSampler.HARNESS, 0.0), refused.get());
        System.out.printf("[bench] %-55s %,9.0f/s  p50 %5.2f ms  p99 %6.2f ms  service %.2f cores  PostgreSQL %.2f  harness %.2f%s%n",
                p.name(), p.perSecond(), p.p50Ms(), p.p99Ms(), p.serviceCores(), p.postgresCores(), p.harnessCores(),
                p.refused() == 0 ? "" : "  REFUSED " + p.refused());
        return p;
    }

    private static void report(Options o, List<Phase> phases) {
        Phase yard = phases.get(0);
        System.out.printf("%n== broker auth, %,d devices, %d connections, %d s per phase (revision %s) ==%n", o.devices(),
                o.concurrency(), o.duration(), System.getProperty("bench.revision", "unknown"));
        for (Phase p : phases) {
            System.out.printf("  %-55s %,9.0f/s  (%.2f of the yardstick)  service %.0f µs CPU per answer, PostgreSQL %.0f µs%s%n",
                    p.name(), p.perSecond(), p.perSecond() / yard.perSecond(), p.serviceCores() / p.perSecond() * 1e6,
                    p.postgresCores() / p.perSecond() * 1e6, p.refused() == 0 ? "" : ", " + p.refused() + " refused");
        }
        Phase topic = phases.get(1);
        for (int[] it : new int[][] {{50, 10}, {50, 60}, {300, 60}}) {
            double asked = o.devices() / (double) Math.max(it[0], it[1]);
            System.out.printf("  devices publishing every %d s, cache %d s: about %,.0f topic questions/s, %.0f%% of the measured capacity, "
                    + "%.2f service cores%n", it[0], it[1], asked, asked / topic.perSecond() * 100,
                    asked * topic.serviceCores() / topic.perSecond());
        }
    }
}
