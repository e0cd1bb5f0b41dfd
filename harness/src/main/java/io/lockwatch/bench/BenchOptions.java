package io.lockwatch.bench;

import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The benchmark's command line (see scripts/bench.sh).
 *
 * @param rate        readings per second to publish in the service run; 0 = as fast as possible (the raw
 *                    ceiling is always as fast as possible)
 * @param warmup      seconds at the start of each timed phase left out of the steady-state figures
 * @param serviceWarmup seconds of readings published, with the clients linked, before the service run and left out
 *                    of every figure (not in drills): the service's JIT compiler is still busy with the paths the
 *                    ceiling and the pre-seed did not take (notifications above all), and that is not its steady state
 * @param confirmWindow most unconfirmed messages per publisher (ceiling and service run alike)
 * @param diagnostics mid-run, write a thread dump of the service, PostgreSQL's activity and top to a file;
 *                    and run the service with Java Flight Recorder from its start
 * @param isolated    use the RabbitMQ virtual host {@value #ISOLATED_VHOST} and the PostgreSQL and ClickHouse
 *                    databases {@value #ISOLATED_DATABASE} (all created beforehand by the script) instead of the
 *                    service's defaults, so that the dev databases and concurrently running integration tests are
 *                    left alone
 * @param clients     clients registered, each with a webhook receiver of the benchmark on loopback
 * @param links       sensors linked to each client (client c: sensors (c * links + j) mod sensors)
 * @param drill       a failure drill during the timed run ({@link Drill}), or none
 * @param partitions  the service's {@code lockwatch.ingest.partitions}: 1 is one readings queue; by default 4 when
 *                    more than one instance runs, else 1
 * @param instances   service instances run against the same broker and databases (2 for the two-instances drill)
 * @param serviceArgs extra arguments for the service (e.g. {@code --camel.metrics.enable-route-policy=false}), to
 *                    compare settings without changing code; one with a single dash is a JVM option
 *                    (e.g. {@code -XX:TieredStopAtLevel=1})
 * @param serviceCpus CPU each service instance may use, in cores (a cgroup of its own), standing in for a machine
 *                    of that size; 0 = no limit
 * @param drain       readings of a backlog to drain (0 = none): instead of the live run, this many are queued while
 *                    the service is stopped, then the service is started and drains them; the drain ceiling is a
 *                    plain consumer draining a backlog of the same size
 * @param perMessage  readings per message in the drain's backlog: 1, or a JSON array of this many (a gateway's)
 * @param receiverDelayMs every client's endpoint answers this long after a request arrived, standing in for an
 *                    endpoint across the internet (0: at once, on loopback)
 * @param maxEventsPerRequest every client's {@code max_events_per_request}: 1, one event per request; more, batched
 *                    delivery (JSON arrays of up to this many events)
 * @param holdAfterSetup null, or a file: once the sensors are registered, the run waits until it exists, so that a
 *                    script beside it writes data of its own into the database on an otherwise idle machine
 *                    (bench-retention.sh's old notifications) before anything is measured
 * @param feedPollers the first this many clients also pull their feeds, a long poll open each at all times
 *                    (0: none); their feed latency, and the service's threads and heap with the polls open, are
 *                    reported
 * @param queueType   the type of the service's queues ({@code lockwatch.amqp.queue-type}) and of the raw ceiling's
 *                    queue, so that the yardstick is the same kind of queue: quorum (the external default) or classic
 * @param ha          against the HA topology ({@code scripts/services.sh --ha up}): the service is given the
 *                    cluster's three nodes, the harness publishes and measures through the first; both are given
 *                    the PostgreSQL pair, whichever node is the primary
 * @param cpuLoad     cores of CPU a process of the harness uses beside the timed run, in bursts of 2 ms (0: none):
 *                    a yardstick for a figure taken beside other work on this box, e.g. what a run without
 *                    feed pollers gives when the machine is as busy as the pollers make it
 * @param feedInstance with feedPollers: the pollers ask an instance of their own for client traffic
 *                    ({@code lockwatch.pipeline.enabled=false}) beside the one that applies and delivers, so that the
 *                    polls it holds are not in the webhooks' JVM
 * @param feedListener with feedPollers: the pollers' long polls go to the service's feed listener
 *                    ({@code lockwatch.feed.listener.port}) instead of its web server; keys and snapshots still to the API
 * @param mqtt        the warm-up and the timed run publish over MQTT (QoS 1, RabbitMQ's plugin on 127.0.0.1:1883) as
 *                    sensors would, instead of AMQP; the raw ceiling stays the AMQP one, the yardstick of both
 * @param lorawan     the warm-up and the timed run publish as a LoRaWAN network does ({@link LoRaWanPublisher}: each
 *                    reading a ChirpStack uplink event, twice, to Mosquitto), the sensors registered with the
 *                    dragino-lds02 profile and the service's ChirpStack adapter on; the raw ceiling stays the AMQP one
 */
record BenchOptions(int sensors, double changes, int duration, double rate, int warmup, int serviceWarmup, long seed,
                    int confirmWindow, boolean diagnostics, boolean isolated, java.util.List<String> serviceArgs,
                    Path jar, Path outDir, String amqpUri, String jdbcUrl, String dbUser, String dbPassword,
                    int clients, int links, Drill drill, int partitions, int instances, double serviceCpus,
                    long drain, int perMessage, boolean mqtt, int receiverDelayMs, int maxEventsPerRequest,
                    Path holdAfterSetup, int feedPollers, String queueType, boolean ha, double cpuLoad,
                    boolean feedInstance, boolean feedListener, boolean lorawan) {

    /** Messages the service takes for each reading published: a LoRaWAN uplink comes twice. */
    int messagesPerReading() {
        return lorawan ? LoRaWanPublisher.COPIES : 1;
    }

    static final String QUEUE = "lockwatch.readings";

    /** The queues the service consumes readings from: one, or one per partition. */
    java.util.List<String> readingQueues() {
        if (partitions <= 1) {
            return java.util.List.of(QUEUE);
        }
        java.util.List<String> queues = new java.util.ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            queues.add(QUEUE + ".p" + p);
        }
        return queues;
    }

    static final String ISOLATED_VHOST = "lockwatch-bench";
    /** The HA topology's RabbitMQ nodes (scripts/lib/ha.sh). */
    static final String HA_ADDRESSES = "127.0.0.1:5681,127.0.0.1:5682,127.0.0.1:5683";
    static final String ISOLATED_DATABASE = "lockwatch_bench";

    /** Properties given to the service on top of {@code --spring.profiles.active=external}. */
    java.util.List<String> serviceArguments() {
        java.util.List<String> args = new java.util.ArrayList<>();
        // the benchmark's webhook receivers listen on loopback
        args.add("--lockwatch.notify.allow-private-targets=true");
        if (isolated) {
            args.add("--spring.rabbitmq.virtual-host=" + ISOLATED_VHOST);
            args.add("--lockwatch.clickhouse.url=jdbc:clickhouse://127.0.0.1:8123/" + ISOLATED_DATABASE);
        }
        if (isolated || ha) {
            args.add("--spring.datasource.url=" + jdbcUrl);
        }
        args.add("--lockwatch.ingest.partitions=" + partitions);
        args.add("--lockwatch.amqp.queue-type=" + queueType);
        if (ha) {
            args.add("--spring.rabbitmq.addresses=" + HA_ADDRESSES);
        }
        args.addAll(drill.serviceArgs());
        serviceArgs.stream().filter(a -> a.startsWith("--")).forEach(args::add);
        return args;
    }

    /** The {@code --service-arg}s that are JVM options ({@code -X...}, {@code -D...}): they go before {@code -jar}. */
    java.util.List<String> serviceJvmOptions() {
        return serviceArgs.stream().filter(a -> a.startsWith("-") && !a.startsWith("--")).toList();
    }

    static final String USAGE = """
            usage: PipelineBenchmark [--sensors 100000] [--clients 1000] [--links 200] [--changes 0.01]
                                   [--duration 60] [--rate 0] [--warmup 10] [--service-warmup 60] [--drill NAME]
                                   [--instances 1] [--partitions 1, 4 with several instances]
                                   [--seed N] [--confirm-window 1000] [--diagnostics] [--isolated]
                                   [--queue-type quorum|classic] [--ha] [--feed-pollers 0 [--feed-instance] [--feed-listener]] [--cpu-load 0]
                                   [--service-arg --name=value ...] [--service-cpus 0] [--drain N]
                                   [--receiver-delay-ms 0] [--max-events-per-request 1] [--hold-after-setup FILE]
                                   [--jar target/lockwatch-0.1.0-SNAPSHOT.jar]
                                   [--out target/bench] [--amqp amqp://guest:guest@127.0.0.1:5672]
                                   [--jdbc jdbc:postgresql://127.0.0.1:5432/lockwatch] [--db-user lockwatch]
                                   [--db-password lockwatch]""";

    static BenchOptions parse(String[] args) {
        CommandLine line = new CommandLine(args, "--diagnostics", "--isolated", "--mqtt", "--ha", "--feed-instance", "--feed-listener",
                "--lorawan");
        int sensors = line.integer("--sensors", 100_000);
        int clients = line.integer("--clients", 1000);
        int links = line.integer("--links", 200);
        Drill drill = Drill.parse(line.text("--drill", Drill.NONE.id));
        int partitions = line.integer("--partitions", 0);
        int instances = line.integer("--instances", 0);
        double serviceCpus = line.number("--service-cpus", 0);
        long drain = line.whole("--drain", 0);
        int perMessage = line.integer("--per-message", 1);
        double changes = line.number("--changes", 0.01);
        int duration = line.integer("--duration", 60);
        double rate = line.number("--rate", 0);
        int warmup = line.integer("--warmup", 10);
        int serviceWarmup = line.integer("--service-warmup", 60);
        long seed = line.whole("--seed", ThreadLocalRandom.current().nextLong());
        int confirmWindow = line.integer("--confirm-window", 1000);
        boolean diagnostics = line.on("--diagnostics");
        boolean mqtt = line.on("--mqtt");
        boolean lorawan = line.on("--lorawan");
        boolean isolated = line.on("--isolated");
        int receiverDelayMs = line.integer("--receiver-delay-ms", 0);
        int maxEventsPerRequest = line.integer("--max-events-per-request", 1);
        Path holdAfterSetup = line.path("--hold-after-setup", null);
        int feedPollers = line.integer("--feed-pollers", 0);
        boolean feedInstance = line.on("--feed-instance");
        boolean feedListener = line.on("--feed-listener");
        double cpuLoad = line.number("--cpu-load", 0);
        java.util.List<String> serviceArgs = new java.util.ArrayList<>(line.all("--service-arg"));
        String queueType = line.text("--queue-type", "quorum");
        boolean ha = line.on("--ha");
        Path jar = line.path("--jar", Path.of("target/lockwatch-0.1.0-SNAPSHOT.jar"));
        Path out = line.path("--out", Path.of("target/bench"));
        String amqp = line.text("--amqp", null);
        String jdbc = line.text("--jdbc", null);
        String user = line.text("--db-user", "lockwatch");
        String password = line.text("--db-password", "lockwatch");
        line.rejectUnknown();
        if (sensors < 1) {
            throw new IllegalArgumentException("--sensors must be at least 1");
        }
        if (clients < 0 || links < 0 || links > sensors) {
            throw new IllegalArgumentException("--clients must be 0 or more, --links between 0 and --sensors");
        }
        if (changes < 0 || changes > 1) {
            throw new IllegalArgumentException("--changes must be between 0 and 1");
        }
        if (rate < 0) {
            throw new IllegalArgumentException("--rate must be 0 (as fast as possible) or more");
        }
        if (confirmWindow < 1) {
            throw new IllegalArgumentException("--confirm-window must be at least 1");
        }
        if (serviceWarmup < 0) {
            throw new IllegalArgumentException("--service-warmup must be 0 or more");
        }
        if (warmup < 0 || duration < warmup + 3) {
            throw new IllegalArgumentException("--duration must exceed --warmup by 3 s at least");
        }
        if (instances == 0) {
            instances = drill.instances();
        }
        if (partitions == 0) {
            partitions = instances > 1 ? 4 : 1;
        }
        if (instances < 1 || instances > 2 || partitions < 1) {
            throw new IllegalArgumentException("--instances must be 1 or 2, --partitions 1 or more");
        }
        if (drain < 0 || (drain > 0 && ((drill != Drill.NONE && drill != Drill.KILL) || instances > 1))) {
            throw new IllegalArgumentException("--drain must be 0 or more, and runs one instance, without a drill but kill");
        }
        if (perMessage < 1 || perMessage > 1000 || (perMessage > 1 && (drain == 0 || partitions > 1))) {
            throw new IllegalArgumentException("--per-message must be 1 to 1000, and more than 1 only with --drain and "
                    + "one readings queue");
        }
        if (mqtt && (drain > 0 || drill != Drill.NONE)) {
            throw new IllegalArgumentException("--mqtt is for the live run: not with --drain or a drill");
        }
        if (lorawan && (mqtt || drain > 0 || drill != Drill.NONE || instances > 1)) {
            throw new IllegalArgumentException("--lorawan is for the live run of one instance: not with --mqtt, "
                    + "--drain, a drill or --instances 2");
        }
        if (lorawan) {
            // the ChirpStack adapter on the network's broker of scripts/services.sh (Mosquitto)
            serviceArgs.addAll(java.util.List.of("--lockwatch.adapters.chirpstack.enabled=true",
                    "--lockwatch.adapters.chirpstack.broker-url=" + LoRaWanPublisher.BROKER,
                    "--lockwatch.adapters.chirpstack.username=" + LoRaWanPublisher.USER,
                    "--lockwatch.adapters.chirpstack.password=" + LoRaWanPublisher.PASSWORD,
                    "--lockwatch.adapters.chirpstack.client-id=lockwatch-bench-" + System.nanoTime()));
        }
        if (maxEventsPerRequest < 1 || maxEventsPerRequest > 1000) {
            throw new IllegalArgumentException("--max-events-per-request must be 1 to 1000");
        }
        if (receiverDelayMs < 0) {
            throw new IllegalArgumentException("--receiver-delay-ms must be 0 or more");
        }
        if (feedPollers < 0 || feedPollers > clients || (feedPollers > 0 && (drain > 0 || drill != Drill.NONE))) {
            throw new IllegalArgumentException("--feed-pollers must be 0 to --clients, and is for the live run");
        }
        if (feedInstance && (feedPollers == 0 || instances > 1)) {
            throw new IllegalArgumentException("--feed-instance is for --feed-pollers, beside one instance with the pipeline");
        }
        if (feedListener && feedPollers == 0) {
            throw new IllegalArgumentException("--feed-listener is for --feed-pollers");
        }
        if (cpuLoad < 0 || cpuLoad > 1 || (cpuLoad > 0 && (drain > 0 || drill != Drill.NONE))) {
            throw new IllegalArgumentException("--cpu-load must be 0 to 1 core, and is for the live run");
        }
        if (serviceCpus < 0) {
            throw new IllegalArgumentException("--service-cpus must be 0 (no limit) or more");
        }
        if (!queueType.equals("quorum") && !queueType.equals("classic")) {
            throw new IllegalArgumentException("--queue-type is quorum or classic");
        }
        if (drill.needsHa() && !ha) {
            throw new IllegalArgumentException("--drill " + drill.id + " needs the HA topology: --ha");
        }
        if (amqp == null) {
            // the node-loss drill kills the node the service declared the readings queue on (its leader, the first
            // of the service's list): the harness, a sensor that stays connected, publishes through the second
            int port = !ha ? 5672 : drill == Drill.RABBITMQ_NODE_LOSS ? 5682 : 5681;
            amqp = "amqp://guest:guest@127.0.0.1:" + port + "/" + (isolated ? ISOLATED_VHOST : "%2F");
        }
        if (jdbc == null) {
            String db = isolated ? ISOLATED_DATABASE : "lockwatch";
            // the HA topology's pair (scripts/lib/ha.sh): whichever is the primary
            jdbc = ha ? "jdbc:postgresql://127.0.0.1:5441,127.0.0.1:5442/" + db + "?targetServerType=primary"
                    : "jdbc:postgresql://127.0.0.1:5432/" + db;
        }
        return new BenchOptions(sensors, changes, duration, rate, warmup, serviceWarmup, seed, confirmWindow, diagnostics, isolated,
                serviceArgs, jar, out, amqp, jdbc, user, password, clients, links, drill,
                partitions, instances, serviceCpus, drain, perMessage, mqtt, receiverDelayMs,
                maxEventsPerRequest, holdAfterSetup, feedPollers, queueType, ha, cpuLoad, feedInstance, feedListener, lorawan);
    }
}
