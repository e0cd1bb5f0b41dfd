package io.lockwatch.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The history benchmark's command line (see scripts/bench-history.sh). It always runs on a RabbitMQ virtual
 * host and PostgreSQL and ClickHouse databases of its own ({@value #VHOST}, {@value #DATABASE}), since a fill
 * wipes them.
 *
 * @param rows            readings written to history (N)
 * @param sensors         sensors the readings are spread over
 * @param days            the readings' measured times span the last this many days before the fill
 * @param perMessage      readings per history message (ingest publishes one message per batch of up to 1000)
 * @param batchSize       the service's {@code lockwatch.history.batch-size}, also used by the ClickHouse-alone run
 * @param maxBacklog      messages ready in the history queue above which publishing pauses (so that the queue
 *                        never runs dry, yet does not hold the whole fill)
 * @param eventsPerSensor events per sensor exported to ClickHouse through the service, for the stats queries
 * @param queries         random range queries timed per path (API and store)
 * @param statsQueries    per-day stats queries timed per path
 * @param ceiling         seconds of the ClickHouse-alone insert run; 0 = skipped
 * @param warmup          seconds at the start of the fill left out of the steady-state figures
 * @param seed            seed of the readings, events and query samples (the same seed gives the same table)
 * @param reuse           skip the fill when the table holds the fill of the same parameters already
 * @param serviceArgs     extra arguments for the service
 */
record HistoryOptions(long rows, int sensors, int days, int perMessage, int batchSize, int maxBacklog,
                      int eventsPerSensor, int queries, int statsQueries, int ceiling, int warmup, long seed,
                      boolean reuse, List<String> serviceArgs, Path jar, Path outDir, String amqpUri,
                      String jdbcUrl, String dbUser, String dbPassword, String clickHouseUrl) {

    static final String VHOST = "lockwatch-histbench";
    static final String DATABASE = "lockwatch_histbench";

    static final String USAGE = """
            usage: HistoryBenchmark [--rows 10000000] [--sensors 100000] [--days 30] [--per-message 1000]
                                    [--batch-size 5000] [--max-backlog 100] [--events-per-sensor 10]
                                    [--queries 1000] [--stats-queries 100] [--ceiling 30] [--warmup 10]
                                    [--seed 1] [--reuse] [--service-arg --name=value ...]
                                    [--jar target/lockwatch-0.1.0-SNAPSHOT.jar] [--out target/bench]
                                    [--amqp amqp://guest:guest@127.0.0.1:5672/lockwatch-histbench]
                                    [--jdbc jdbc:postgresql://127.0.0.1:5432/lockwatch_histbench]
                                    [--db-user lockwatch] [--db-password lockwatch]
                                    [--clickhouse jdbc:clickhouse://127.0.0.1:8123]""";

    /** Properties given to the service on top of {@code --spring.profiles.active=external}. */
    List<String> serviceArguments() {
        List<String> args = new ArrayList<>();
        args.add("--spring.rabbitmq.virtual-host=" + VHOST);
        args.add("--spring.datasource.url=" + jdbcUrl);
        args.add("--lockwatch.clickhouse.url=" + clickHouseUrl + "/" + DATABASE);
        args.add("--lockwatch.history.batch-size=" + batchSize);
        args.addAll(serviceArgs);
        return args;
    }

    static HistoryOptions parse(String[] args) {
        CommandLine line = new CommandLine(args, "--reuse");
        long rows = line.whole("--rows", 10_000_000);
        int sensors = line.integer("--sensors", 100_000);
        int days = line.integer("--days", 30);
        int perMessage = line.integer("--per-message", 1000);
        int batchSize = line.integer("--batch-size", 5000);
        int maxBacklog = line.integer("--max-backlog", 100);
        int eventsPerSensor = line.integer("--events-per-sensor", 10);
        int queries = line.integer("--queries", 1000);
        int statsQueries = line.integer("--stats-queries", 100);
        int ceiling = line.integer("--ceiling", 30);
        int warmup = line.integer("--warmup", 10);
        long seed = line.whole("--seed", 1);
        boolean reuse = line.on("--reuse");
        List<String> serviceArgs = line.all("--service-arg");
        Path jar = line.path("--jar", Path.of("target/lockwatch-0.1.0-SNAPSHOT.jar"));
        Path out = line.path("--out", Path.of("target/bench"));
        String amqp = line.text("--amqp", "amqp://guest:guest@127.0.0.1:5672/" + VHOST);
        String jdbc = line.text("--jdbc", "jdbc:postgresql://127.0.0.1:5432/" + DATABASE);
        String user = line.text("--db-user", "lockwatch");
        String password = line.text("--db-password", "lockwatch");
        String clickHouse = line.text("--clickhouse", "jdbc:clickhouse://127.0.0.1:8123").replaceAll("/+$", "");
        line.rejectUnknown();
        if (rows < 1 || sensors < 1 || days < 1 || perMessage < 1 || batchSize < 1 || maxBacklog < 1) {
            throw new IllegalArgumentException("--rows, --sensors, --days, --per-message, --batch-size and --max-backlog must be at least 1");
        }
        if ((double) days * 86_400_000 / rows < 1) {
            throw new IllegalArgumentException("--rows may be at most one per millisecond of --days");
        }
        if (eventsPerSensor < 0 || queries < 0 || statsQueries < 0 || ceiling < 0 || warmup < 0) {
            throw new IllegalArgumentException("--events-per-sensor, --queries, --stats-queries, --ceiling and --warmup cannot be negative");
        }
        if (!amqp.endsWith("/" + VHOST) || !jdbc.endsWith("/" + DATABASE)) {
            throw new IllegalArgumentException("the benchmark wipes its broker and databases: --amqp must name the virtual host "
                    + VHOST + " and --jdbc the database " + DATABASE);
        }
        return new HistoryOptions(rows, sensors, days, perMessage, batchSize, maxBacklog, eventsPerSensor, queries,
                statsQueries, ceiling, warmup, seed, reuse, serviceArgs, jar, out, amqp, jdbc, user,
                password, clickHouse);
    }
}
