package io.lockwatch.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The heartbeat benchmark's command line (see scripts/bench-heartbeat.sh).
 *
 * @param sensors       sensors registered
 * @param silent        of which this many, chosen at random, report once at one moment and then fall silent
 * @param timeout       the silent sensors' own heartbeat timeout, seconds (the others keep the service's default)
 * @param rate          readings per second published to the other sensors throughout (0 = as fast as possible)
 * @param scanInterval  the service's heartbeat scan interval, seconds
 * @param worstPhase    place the silent sensors' moment so that their timeout expires just after a scan started
 *                      (they wait a whole scan interval), instead of wherever it falls
 * @param restore       silent sensors sent one reading after they were declared lost (0 = none); with --alarm,
 *                      open doors that close after their alarm was raised
 * @param alarm         measure open-door alarms instead: the chosen sensors open their door at one moment and
 *                      report nothing more; --timeout is their open_alarm_seconds, --scan-interval the alarm scan's
 * @param escalate      with alarm: each open door's chain has one step after this many seconds (0: no chain)
 * @param maintenance   a maintenance window over the silent sensors, ended once they have been restored
 * @param maxWait       seconds after the timeout expired to wait for the lost events before giving up
 * @param diagnostics   during detection, write PostgreSQL's sessions every second to a file
 * @param serviceArgs   extra arguments for the service, to compare settings without changing code
 */
record HeartbeatOptions(int sensors, int silent, int timeout, double rate, int scanInterval, boolean worstPhase,
                        int restore, boolean alarm, int escalate, boolean maintenance,
                        int maxWait, long seed, int confirmWindow, boolean diagnostics, List<String> serviceArgs,
                        Path jar, Path outDir, String amqpUri, String jdbcUrl, String clickHouseUrl, String dbUser,
                        String dbPassword) {

    /** The benchmark's own RabbitMQ virtual host and databases (the script creates them). */
    static final String VHOST = "lockwatch-hbbench";
    static final String DATABASE = "lockwatch_hbbench";

    static final String USAGE = """
            usage: HeartbeatBenchmark [--sensors 1000000] [--silent 100000] [--timeout 120] [--rate 2000]
                                      [--scan-interval 10] [--phase worst|any] [--restore 1000] [--alarm]
                                      [--escalate S] [--maintenance]
                                      [--max-wait 300] [--seed N]
                                      [--confirm-window 1000] [--diagnostics] [--service-arg --name=value ...]
                                      [--jar target/lockwatch-0.1.0-SNAPSHOT.jar] [--out target/bench]
                                      [--amqp amqp://guest:guest@127.0.0.1:5672/lockwatch-hbbench]
                                      [--jdbc jdbc:postgresql://127.0.0.1:5432/lockwatch_hbbench]
                                      [--clickhouse jdbc:clickhouse://127.0.0.1:8123/lockwatch_hbbench]
                                      [--db-user lockwatch] [--db-password lockwatch]""";

    /** Properties given to the service on top of {@code --spring.profiles.active=external}. */
    List<String> serviceArguments() {
        List<String> args = new ArrayList<>();
        args.add("--spring.rabbitmq.virtual-host=" + vhost());
        args.add("--spring.datasource.url=" + jdbcUrl);
        args.add("--lockwatch.clickhouse.url=" + clickHouseUrl);
        args.add((alarm ? "--lockwatch.alarms.scan-interval=" : "--lockwatch.heartbeat.scan-interval=") + scanInterval * 1000L);
        args.addAll(serviceArgs);
        return args;
    }

    /** The virtual host of the AMQP URI (its path, decoded; "/" when it has none). */
    String vhost() {
        String path = java.net.URI.create(amqpUri).getPath();
        return path == null || path.length() <= 1 ? "/" : java.net.URLDecoder.decode(path.substring(1),
                java.nio.charset.StandardCharsets.UTF_8);
    }

    static HeartbeatOptions parse(String[] args) {
        CommandLine line = new CommandLine(args, "--diagnostics", "--alarm", "--maintenance");
        int sensors = line.integer("--sensors", 1_000_000);
        int silent = line.integer("--silent", 100_000);
        int timeout = line.integer("--timeout", 120);
        double rate = line.number("--rate", 2000);
        boolean alarm = line.on("--alarm");
        int escalate = line.integer("--escalate", 0);
        boolean maintenance = line.on("--maintenance");
        Integer scanIntervalGiven = line.integer("--scan-interval");
        boolean worstPhase = switch (line.text("--phase", "worst")) {
            case "worst" -> true;
            case "any" -> false;
            default -> throw new IllegalArgumentException("--phase must be worst or any");
        };
        int restore = line.integer("--restore", 1000);
        int maxWait = line.integer("--max-wait", 300);
        long seed = line.whole("--seed", ThreadLocalRandom.current().nextLong());
        int confirmWindow = line.integer("--confirm-window", 1000);
        boolean diagnostics = line.on("--diagnostics");
        List<String> serviceArgs = line.all("--service-arg");
        Path jar = line.path("--jar", Path.of("target/lockwatch-0.1.0-SNAPSHOT.jar"));
        Path out = line.path("--out", Path.of("target/bench"));
        String amqp = line.text("--amqp", "amqp://guest:guest@127.0.0.1:5672/" + VHOST);
        String jdbc = line.text("--jdbc", "jdbc:postgresql://127.0.0.1:5432/" + DATABASE);
        String clickHouse = line.text("--clickhouse", "jdbc:clickhouse://127.0.0.1:8123/" + DATABASE);
        String user = line.text("--db-user", "lockwatch");
        String password = line.text("--db-password", "lockwatch");
        line.rejectUnknown();
        // the service's default: 10 s for the heartbeat scan, 5 s for the alarm scan
        int scanInterval = scanIntervalGiven != null ? scanIntervalGiven : alarm ? 5 : 10;
        if (silent < 1 || sensors <= silent) {
            throw new IllegalArgumentException("--silent must be at least 1 and below --sensors");
        }
        if (timeout < 1) {
            throw new IllegalArgumentException("--timeout must be at least 1 s");
        }
        if (rate < 0) {
            throw new IllegalArgumentException("--rate must be 0 (as fast as possible) or more");
        }
        if (scanInterval < 1) {
            throw new IllegalArgumentException("--scan-interval must be at least 1 s");
        }
        if (restore < 0 || restore > silent) {
            throw new IllegalArgumentException("--restore must be between 0 and --silent");
        }
        if (escalate < 0 || escalate > 0 && !alarm) {
            throw new IllegalArgumentException("--escalate takes seconds, with --alarm");
        }
        if (maintenance && alarm) {
            throw new IllegalArgumentException("--maintenance measures the heartbeat, without --alarm");
        }
        if (maxWait < 1 || confirmWindow < 1) {
            throw new IllegalArgumentException("--max-wait and --confirm-window must be at least 1");
        }
        return new HeartbeatOptions(sensors, silent, timeout, rate, scanInterval, worstPhase, restore, alarm, escalate,
                maintenance, maxWait, seed,
                confirmWindow, diagnostics, serviceArgs, jar, out, amqp, jdbc, clickHouse, user, password);
    }
}
