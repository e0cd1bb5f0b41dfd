package io.lockwatch.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Devices as they connect to RabbitMQ: K MQTT connections, each logged in with a credential of its own and publishing
 * only its own sensor's readings (QoS 1), at R readings a second in all, so each device every K / R seconds. The broker
 * asks lockwatch about each device (its HTTP auth backend, behind its cache, as {@code scripts/services.sh} sets them
 * up), so the service runs on port 8080, where the broker asks. The yardstick, in the same run: as many connections
 * publishing the same readings as the broker's own user ({@code guest}, from loopback), of whom nothing is asked.
 * Prints the CPU per reading of RabbitMQ, the service and PostgreSQL in both and their ratio, the broker's memory per
 * device connection, and how many questions of each kind the broker asked.
 * <p>
 * The client is a minimal MQTT 3.1.1 one on plain sockets: Paho's threads per connection would not let one process
 * hold thousands. Credentials: {@link BenchDevices}. RabbitMQ here holds at most 20,000 open files, and 3.10 spends a few hundred KB per
 * MQTT connection, so K is in the thousands, not the 100,000 of a large fleet.
 */
public final class DeviceConnectionsBenchmark {

    record Options(Path jar, Path out, int devices, int rate, int duration) {
        static final String USAGE = "usage: DeviceConnectionsBenchmark [--devices 5000] [--rate 500] [--duration 60]";

        static Options parse(String[] args) {
            CommandLine line = new CommandLine(args);
            return new Options(Path.of(line.text("--jar", "target/lockwatch-0.1.0-SNAPSHOT.jar")),
                    Path.of(line.text("--out", "target/bench")), line.integer("--devices", 5000), line.integer("--rate", 500),
                    line.integer("--duration", 60));
        }
    }

    static final String[] QUESTIONS = {"broker-asks-whether-a-device-may-log-in", "broker-asks-whether-a-device-may-open-a-vhost",
            "broker-asks-whether-a-device-may-use-a-resource", "broker-asks-whether-a-device-may-publish-with-a-routing-key"};

    public static void main(String[] args) {
        Mains.run(args, Options::parse, Options.USAGE, DeviceConnectionsBenchmark::run);
    }

    /** What one phase measured: its rate, and the cores of each process group. */
    record Phase(double rate, Map<String, Double> cores, long sent, long acks) {
        double micros(String group) {
            return cores.getOrDefault(group, 0.0) / rate * 1e6;
        }
    }

    static int run(Options o) throws Exception {
        Files.createDirectories(o.out());
        String prefix = BenchDevices.prefix("DC");
        try (ServiceProcess service = ServiceProcess.start(o.jar(), List.of(), BenchDevices.serviceArguments(),
                o.out().resolve("device-connections-service.log"), o.out().resolve("service.pid"), 8080)) {
            service.awaitHealthy(Duration.ofMinutes(3));
            HttpClient http = HttpClient.newHttpClient();
            String secret = BenchDevices.register(http, service.baseUri(), prefix, o.devices());
            byte[][] topics = new byte[o.devices()][];
            for (int i = 0; i < o.devices(); i++) {
                topics[i] = ("lockwatch/readings/" + prefix + i).getBytes(StandardCharsets.UTF_8);
            }
            CpuSampler cpu = new CpuSampler(service.pid());

            // the yardstick: as many connections, the same readings, as the broker's own user (no question asked)
            double memoryBefore = brokerMemoryBytes();
            List<SocketChannel> own = new ArrayList<>();
            for (int i = 0; i < o.devices(); i++) {
                own.add(connect("yard-" + prefix + i, "guest", "guest"));
            }
            Thread.sleep(5000); // the broker settles after the logins
            double memoryWith = brokerMemoryBytes();
            Phase yard = publish(o, own, topics, cpu);
            for (SocketChannel c : own) {
                c.close();
            }

            Map<String, Long> asked0 = questions(http, service.baseUri());
            long t0 = System.nanoTime();
            List<SocketChannel> devices = new ArrayList<>();
            for (int i = 0; i < o.devices(); i++) {
                devices.add(connect("dev-" + prefix + i, "sensor." + prefix + i, secret));
            }
            double connectSeconds = (System.nanoTime() - t0) / 1e9;
            Map<String, Long> asked1 = questions(http, service.baseUri());
            System.out.printf("[bench] %,d devices connected in %.1f s%n", o.devices(), connectSeconds);
            Phase dev = publish(o, devices, topics, cpu);
            Map<String, Long> asked2 = questions(http, service.baseUri());
            for (SocketChannel d : devices) {
                d.close();
            }

            System.out.printf("%n== %,d MQTT connections, %,.0f readings/s for %d s (each sensor every %.0f s), revision %s ==%n",
                    o.devices(), dev.rate(), o.duration(), o.devices() / dev.rate(), System.getProperty("bench.revision", "unknown"));
            System.out.printf("  %-52s %12s %12s %8s%n", "CPU µs per reading", "broker user", "devices", "ratio");
            for (String g : new String[] {CpuSampler.RABBITMQ, CpuSampler.SERVICE, CpuSampler.POSTGRESQL, CpuSampler.HARNESS}) {
                System.out.printf("  %-52s %,12.0f %,12.0f %8.2f%n", g, yard.micros(g), dev.micros(g), dev.micros(g) / yard.micros(g));
            }
            System.out.printf("  published / PUBACKs: broker user %,d / %,d; devices %,d / %,d%n", yard.sent(), yard.acks(), dev.sent(), dev.acks());
            System.out.printf("  RabbitMQ resident memory: %.0f KB per MQTT connection (%.0f → %.0f MB with the broker user's)%n",
                    (memoryWith - memoryBefore) / o.devices() / 1e3, memoryBefore / 1e6, memoryWith / 1e6);
            System.out.println("  questions the broker asked lockwatch:");
            for (String q : QUESTIONS) {
                System.out.printf("    %-62s %,7d while connecting, %,7d while publishing (%.1f/s)%n", q,
                        asked1.get(q) - asked0.get(q), asked2.get(q) - asked1.get(q), (asked2.get(q) - asked1.get(q)) / (double) o.duration());
            }
        } finally {
            BenchDevices.remove(prefix);
        }
        return 0;
    }

    /** R readings a second, round robin over the connections (each its own sensor's topic), for the duration. */
    private static Phase publish(Options o, List<SocketChannel> connections, byte[][] topics, CpuSampler cpu) throws Exception {
        cpu.sample();
        long started = System.nanoTime(), sent = 0, acks = 0;
        ByteBuffer in = ByteBuffer.allocate(64 * 1024);
        while (System.nanoTime() - started < o.duration() * 1_000_000_000L) {
            long due = (System.nanoTime() - started) * o.rate() / 1_000_000_000L;
            while (sent < due) {
                int d = (int) (sent % connections.size());
                connections.get(d).write(ByteBuffer.wrap(publish(topics[d], (int) (sent % 65_000) + 1, sent % 2 == 0 ? "0" : "1")));
                sent++;
            }
            for (int d = (int) (sent % 50); d < connections.size(); d += 50) { // a share of the sockets each round
                acks += pubacks(connections.get(d), in);
            }
            Thread.sleep(2);
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        Map<String, Double> cores = cpu.sample();
        Thread.sleep(1000);
        for (SocketChannel c : connections) {
            acks += pubacks(c, in);
        }
        return new Phase(sent / seconds, cores, sent, acks);
    }

    /** An MQTT 3.1.1 session: CONNECT with this login, the CONNACK awaited; then non-blocking. */
    private static SocketChannel connect(String clientId, String user, String password) throws IOException {
        ByteArrayOutputStream payload = new ByteArrayOutputStream();
        payload.writeBytes(new byte[] {0, 4, 'M', 'Q', 'T', 'T', 4, (byte) 0xC2, 0x02, 0x58}); // clean session, user, password, keep-alive 600 s
        string(payload, clientId);
        string(payload, user);
        string(payload, password);
        SocketChannel channel = SocketChannel.open(new InetSocketAddress("127.0.0.1", 1883));
        channel.write(ByteBuffer.wrap(packet(0x10, payload.toByteArray())));
        ByteBuffer connack = ByteBuffer.allocate(4);
        while (connack.hasRemaining()) {
            if (channel.read(connack) < 0) {
                throw new IOException("the broker closed the connection of " + user);
            }
        }
        if (connack.get(0) != 0x20 || connack.get(3) != 0) {
            throw new IOException("the broker refused " + user + ": CONNACK code " + connack.get(3));
        }
        channel.configureBlocking(false);
        return channel;
    }

    private static byte[] publish(byte[] topic, int packetId, String body) {
        ByteArrayOutputStream p = new ByteArrayOutputStream();
        p.write(topic.length >> 8);
        p.write(topic.length);
        p.writeBytes(topic);
        p.write(packetId >> 8);
        p.write(packetId);
        p.writeBytes(body.getBytes(StandardCharsets.UTF_8));
        return packet(0x32, p.toByteArray()); // PUBLISH, QoS 1
    }

    /** PUBACKs read from the socket so far (their 4-byte packets; nothing else comes to a publisher). */
    private static long pubacks(SocketChannel channel, ByteBuffer in) throws IOException {
        long n = 0;
        int read;
        in.clear();
        while ((read = channel.read(in)) > 0) {
            n += read / 4;
            in.clear();
        }
        return n;
    }

    private static void string(ByteArrayOutputStream out, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.write(b.length >> 8);
        out.write(b.length);
        out.writeBytes(b);
    }

    private static byte[] packet(int type, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(type);
        int n = body.length;
        do {
            int digit = n % 128;
            n /= 128;
            out.write(n > 0 ? digit | 0x80 : digit);
        } while (n > 0);
        out.writeBytes(body);
        return out.toByteArray();
    }

    /** The broker's resident memory as the kernel counts it (VmRSS of its beam.smp). */
    private static double brokerMemoryBytes() throws IOException {
        try (var procs = Files.newDirectoryStream(Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path dir : procs) {
                try {
                    if (Files.readString(dir.resolve("cmdline")).startsWith("/usr/lib/erlang/erts") || Files.readString(dir.resolve("comm")).trim().equals("beam.smp")) {
                        for (String line : Files.readAllLines(dir.resolve("status"))) {
                            if (line.startsWith("VmRSS:")) {
                                return Double.parseDouble(line.replaceAll("[^0-9]", "")) * 1024;
                            }
                        }
                    }
                } catch (IOException gone) {
                    // exited meanwhile
                }
            }
        }
        throw new IOException("no beam.smp process: is RabbitMQ running?");
    }

    /** How many questions of each kind the broker has asked, from the routes' own counts (Jolokia). */
    private static Map<String, Long> questions(HttpClient http, URI base) throws IOException, InterruptedException {
        Map<String, Long> asked = new LinkedHashMap<>();
        for (String route : QUESTIONS) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve(
                    "/actuator/jolokia/read/org.apache.camel:context=lockwatch,type=routes,name=%22" + route + "%22/ExchangesTotal"))
                    .header("Authorization", "Bearer " + ServiceProcess.API_TOKEN).build(), HttpResponse.BodyHandlers.ofString());
            asked.put(route, new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body()).get("value").asLong());
        }
        return asked;
    }
}
