package io.lockwatch.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * What a new user measures first (issue 55): the embedded default (Qpid Broker-J, the embedded PostgreSQL, history
 * in PostgreSQL), one client linked to every sensor, and the states of all its sensors posted over HTTP in arrays,
 * as a gateway or a script would. Each round posts every sensor's state (the first round their first states, each
 * later one every door the other way), then waits until the client heard every change: the figure is the time from
 * the round's first POST to the last webhook heard, and notifications a second. Every webhook's signature is
 * checked and every change must arrive once, in order per sensor; a round that misses one fails the run.
 * Run by scripts/bench-embedded.sh.
 */
public final class EmbeddedBenchmark {

    static final String USAGE = """
            usage: EmbeddedBenchmark [--sensors 5000] [--per-request 1000] [--rounds 3] [--receiver-delay-ms 0]
                                     [--timeout 300] [--external] [--service-arg --name=value ...]
                                     [--jvm-option -XX:... ...]""";
    private static final ObjectMapper JSON = new ObjectMapper();

    record Options(int sensors, int perRequest, int rounds, long receiverDelayMs, int timeoutSeconds, boolean external,
                   List<String> serviceArgs, List<String> jvmOptions, Path jar, Path out) {

        static Options parse(String[] args) {
            int sensors = 5000, perRequest = 1000, rounds = 3, timeout = 300;
            long delay = 0;
            boolean external = false;
            Path jar = null, out = Path.of("target/bench");
            List<String> serviceArgs = new ArrayList<>(), jvmOptions = new ArrayList<>();
            for (int i = 0; i < args.length; i++) {
                String value = i + 1 < args.length ? args[i + 1] : null;
                if (args[i].equals("--external")) {
                    external = true;
                    continue;
                }
                switch (args[i]) {
                    case "--sensors" -> sensors = Integer.parseInt(value);
                    case "--per-request" -> perRequest = Integer.parseInt(value);
                    case "--rounds" -> rounds = Integer.parseInt(value);
                    case "--receiver-delay-ms" -> delay = Long.parseLong(value);
                    case "--timeout" -> timeout = Integer.parseInt(value);
                    case "--service-arg" -> serviceArgs.add(value);
                    case "--jvm-option" -> jvmOptions.add(value);
                    case "--jar" -> jar = Path.of(value);
                    case "--out" -> out = Path.of(value);
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
                i++;
            }
            if (jar == null || sensors < 1 || perRequest < 1 || perRequest > 1000 || rounds < 1) {
                throw new IllegalArgumentException("--jar is required; --sensors and --rounds at least 1; --per-request 1 to 1000");
            }
            return new Options(sensors, perRequest, rounds, delay, timeout, external, List.copyOf(serviceArgs),
                    List.copyOf(jvmOptions), jar, out);
        }
    }

    public static void main(String[] args) {
        Mains.run(args, Options::parse, USAGE, EmbeddedBenchmark::run);
    }

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    /** The embedded default's documented token; the external profile is given the benchmark's. */
    private final String token;
    private URI api;

    private EmbeddedBenchmark(Options o) {
        token = o.external() ? ServiceProcess.API_TOKEN : "local-dev-token";
    }

    static int run(Options o) throws Exception {
        return new EmbeddedBenchmark(o).measure(o);
    }

    private int measure(Options o) throws Exception {
        Files.createDirectories(o.out());
        Path log = o.out().resolve("embedded-service.log");
        int port = ServiceProcess.freePort();
        String java = ProcessHandle.current().info().command().orElse("java");
        // as `mvn spring-boot:run` starts it (the pom's collector; the plugin's C1-only compilation, which
        // --jvm-option -XX:TieredStopAtLevel=4 undoes), on throw-away data
        List<String> command = new ArrayList<>(List.of(java, "-XX:+UseParallelGC", "-XX:TieredStopAtLevel=1"));
        command.addAll(o.jvmOptions());
        command.addAll(List.of("-jar", o.jar().toString(), "--server.port=" + port,
                "--lockwatch.routes.dir=" + o.out().resolve("embedded-routes").toAbsolutePath()));
        if (o.external()) {
            // the same service beside RabbitMQ, PostgreSQL and ClickHouse (scripts/services.sh), in the benchmark's own
            // virtual host and databases, which scripts/bench-embedded.sh empties first
            command.addAll(List.of("--spring.profiles.active=external", "--lockwatch.api.tokens=" + token,
                    "--lockwatch.secrets.keys=" + ServiceProcess.SECRETS_KEY, "--lockwatch.notify.allow-private-targets=true",
                    "--spring.rabbitmq.virtual-host=" + BenchOptions.ISOLATED_VHOST,
                    "--spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/" + BenchOptions.ISOLATED_DATABASE,
                    "--lockwatch.clickhouse.url=jdbc:clickhouse://127.0.0.1:8123/" + BenchOptions.ISOLATED_DATABASE));
        } else {
            command.addAll(List.of("--lockwatch.embedded.ephemeral=true", "--lockwatch.embedded.mqtt-port=0",
                    "--lockwatch.embedded.data-dir=" + o.out().resolve("embedded-data").toAbsolutePath()));
        }
        command.addAll(o.serviceArgs());
        // stopped when done (SIGTERM), and by scripts/lib/bench.sh from its pid file if this harness dies first
        try (ServiceProcess service = ServiceProcess.startCommand(command, port, log, o.out().resolve("embedded.pid"));
             Webhooks webhooks = new Webhooks(List.of("whsec_" + "A".repeat(44)), 64, o.receiverDelayMs())) {
            api = service.baseUri().resolve("/api/v1/");
            service.awaitHealthy(Duration.ofMinutes(3));
            System.out.printf("[bench] %s up (pid %d, %s); %d sensors, one client, states posted %d a request%n",
                    o.external() ? "the external profile" : "the embedded default", service.pid(), service.baseUri(),
                    o.sensors(), o.perRequest());
            register(o, webhooks);
            CpuSampler cpu = new CpuSampler(service.pid());
            List<Map<String, Object>> rounds = new ArrayList<>();
            boolean ok = true;
            long expected = 0;
            for (int round = 1; round <= o.rounds(); round++) {
                cpu.sample();
                expected += o.sensors();
                int state = round % 2; // 1 (closed) first, then open, closed, ...
                long first = System.currentTimeMillis();
                postStates(o, state);
                long posted = System.currentTimeMillis();
                long deadline = System.nanoTime() + Duration.ofSeconds(o.timeoutSeconds()).toNanos();
                while (webhooks.distinct() < expected && System.nanoTime() < deadline && service.isAlive()) {
                    Thread.sleep(5);
                }
                List<Webhooks.Arrival> heard = webhooks.arrivals().stream()
                        .filter(a -> a.state() != null && a.state() == state && a.occurredAtMs() >= first - 1000).toList();
                long last = heard.stream().mapToLong(Webhooks.Arrival::arrivedAtMs).max().orElse(first);
                double seconds = (last - first) / 1000.0;
                Map<String, Double> cores = cpu.sample();
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("round", round);
                r.put("heard", heard.size());
                r.put("posted_ms", posted - first);
                r.put("last_heard_s", seconds);
                r.put("per_second", Math.round(heard.size() / Math.max(seconds, 0.001)));
                long[] latency = heard.stream().mapToLong(Webhooks.Arrival::latencyMs).sorted().toArray();
                r.put("latency_p50_ms", Math.round(NotificationCheck.quantile(latency, 0.50)));
                r.put("latency_p99_ms", Math.round(NotificationCheck.quantile(latency, 0.99)));
                // CPU ms a notification by process; the harness is the client's receiver (with its signature checks)
                // and the POSTs, on the same two cores
                double cpuSecondsPerNotification = Math.max(seconds, 0.001) / Math.max(1, heard.size());
                for (String group : List.of(CpuSampler.SERVICE, CpuSampler.POSTGRESQL, CpuSampler.RABBITMQ,
                        CpuSampler.CLICKHOUSE, CpuSampler.HARNESS)) {
                    r.put(group + "_cpu_ms_per_notification",
                            round2(cores.getOrDefault(group, 0.0) * cpuSecondsPerNotification * 1000));
                }
                r.put("machine_cores", round2(cores.getOrDefault(CpuSampler.MACHINE, 0.0)));
                rounds.add(r);
                System.out.printf("[bench] round %d (%s): %d of %d heard, the last %.2f s after the first POST (the POSTs took %d ms): "
                                + "%s a second; latency p50 / p99 %s / %s ms; service %.2f ms CPU a notification, PostgreSQL %.2f%s, "
                                + "this harness (the receiver) %.2f; machine %.2f of 2 cores%n", round, round == 1 ? "first states" : "every door changed",
                        heard.size(), o.sensors(), seconds, posted - first, r.get("per_second"), r.get("latency_p50_ms"),
                        r.get("latency_p99_ms"), r.get("service_cpu_ms_per_notification"),
                        r.get("postgresql_cpu_ms_per_notification"), o.external() ? String.format(Locale.US,
                                ", RabbitMQ %.2f, ClickHouse %.2f", r.get("rabbitmq_cpu_ms_per_notification"),
                                r.get("clickhouse_cpu_ms_per_notification")) : "", r.get("harness_cpu_ms_per_notification"),
                        r.get("machine_cores"));
                if (heard.size() != o.sensors()) {
                    ok = false;
                    break;
                }
            }
            String verdict = correctness(webhooks, o);
            ok &= verdict.startsWith("OK");
            System.out.println("[bench] correctness: " + verdict);
            Map<String, Object> report = new LinkedHashMap<>();
            report.put("benchmark", "embedded");
            report.put("profile", o.external() ? "external" : "embedded");
            report.put("revision", System.getProperty("bench.revision", "unknown"));
            report.put("at", Instant.now().toString());
            report.put("sensors", o.sensors());
            report.put("per_request", o.perRequest());
            report.put("receiver_delay_ms", o.receiverDelayMs());
            report.put("rounds", rounds);
            report.put("correctness", verdict);
            Path json = o.out().resolve(o.external() ? "embedded-external.json" : "embedded.json");
            Files.writeString(json, Json.write(report) + "\n");
            System.out.println("[bench] written " + json);
            return ok ? 0 : 1;
        }
    }

    /** One client at the receiver, and every sensor linked to it, by one registry file. */
    private void register(Options o, Webhooks webhooks) throws IOException, InterruptedException {
        String name = "embedded-bench-" + System.currentTimeMillis();
        StringBuilder rows = new StringBuilder("[");
        for (int i = 0; i < o.sensors(); i++) {
            rows.append(i == 0 ? "" : ",").append("{\"sensor_id\":\"").append(sensor(i))
                    .append("\",\"address\":\"bench\",\"client_name\":\"").append(name)
                    .append("\",\"client_url\":\"").append(webhooks.url(0)).append("\"}");
        }
        JsonNode imported = JSON.readTree(send("POST", "import", rows.append("]").toString(), 200));
        webhooks.key(0, imported.get("new_clients").get(0).get("webhook_secret").asText());
    }

    private void postStates(Options o, int state) throws IOException, InterruptedException {
        for (int from = 0; from < o.sensors(); from += o.perRequest()) {
            StringBuilder body = new StringBuilder("[");
            for (int i = from; i < Math.min(o.sensors(), from + o.perRequest()); i++) {
                body.append(i == from ? "" : ",").append("{\"sensor_id\":\"").append(sensor(i)).append("\",\"data\":")
                        .append(state).append('}');
            }
            send("POST", "readings", body.append("]").toString(), 202);
        }
    }

    /** Every change heard once, signed, and each sensor's in the order of its sequence. */
    private static String correctness(Webhooks webhooks, Options o) {
        List<Webhooks.Arrival> all = webhooks.arrivals();
        long unsigned = all.stream().filter(a -> !a.signatureValid()).count();
        Map<String, List<Webhooks.Arrival>> bySensor = new LinkedHashMap<>();
        all.forEach(a -> bySensor.computeIfAbsent(a.sensorId(), s -> new ArrayList<>()).add(a));
        long outOfOrder = bySensor.values().stream().filter(list -> {
            List<Webhooks.Arrival> byArrival = list.stream().sorted(Comparator.comparingLong(Webhooks.Arrival::order)).toList();
            for (int i = 1; i < byArrival.size(); i++) {
                if (byArrival.get(i).sequence() < byArrival.get(i - 1).sequence()) {
                    return true;
                }
            }
            return false;
        }).count();
        long expected = (long) o.sensors() * o.rounds();
        if (all.size() == expected && unsigned == 0 && outOfOrder == 0 && webhooks.malformed() == 0) {
            return "OK (" + all.size() + " notifications, each once, signed, in order per sensor; " + webhooks.redeliveries()
                    + " delivered again)";
        }
        return "FAILED: " + all.size() + " of " + expected + " heard, " + unsigned + " unsigned, " + outOfOrder
                + " sensors out of order, " + webhooks.malformed() + " malformed";
    }

    private static String sensor(int i) {
        return String.format("EB%06d", i);
    }

    private String send(String method, String path, String body, int expect) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(api.resolve(path)).timeout(Duration.ofMinutes(2))
                .header("Authorization", "Bearer " + token).header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != expect) {
            throw new IOException(method + " " + path + ": HTTP " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }

    private static double round2(double v) {
        return Math.round(v * 100) / 100.0;
    }
}
