package io.lockwatch.bench;

import java.util.List;
import java.util.Locale;

/**
 * A failure drill run inside the pipeline benchmark ({@code scripts/drill.sh <name>}): the same traffic,
 * receivers and checks, with one disruption during the timed run; afterwards the harness waits until everything
 * has settled (by the databases, not the service's counters, which a restart resets) and prints PASS or FAIL
 * with its counts.
 */
enum Drill {
    NONE("", "no drill"),
    KILL("kill", "kill -9 the service a third into the run, then start it again"),
    RABBITMQ("rabbitmq-restart", "publish as fast as possible for a third of the run, then restart RabbitMQ with that backlog (publishing pauses meanwhile)"),
    POSTGRES("postgres-restart", "restart PostgreSQL a third into the run"),
    CLICKHOUSE("clickhouse-stop", "stop ClickHouse a third into the run, for 2 minutes"),
    HANGING_CLIENT("hanging-client", "client 0's endpoint hangs (never answers) for 5 minutes from the start"),
    FAILING_CLIENT("failing-client", "client 0's endpoint answers 500 for 5 minutes from the start"),
    MALFORMED("malformed", "100,000 bad messages of every kind (127 KB bodies, near the broker's limit, invalid UTF-8 included) among the readings"),
    FUTURE_TS("future-ts", "one sensor in a hundred also sends one reading measured 4 minutes ahead during the run: "
            + "parked as ts_in_future, and no genuine reading after it is lost"),
    POSTGRES_READ_ONLY("postgres-read-only", "PostgreSQL turns read-only for 30 s a third into the run (a failover): "
            + "waited out, nothing parked"),
    RABBITMQ_NODE_LOSS("rabbitmq-node-loss", "kill -9 the RabbitMQ node that leads the readings queue a third into the "
            + "run and delete its data directory (a lost disk); it stays down (the HA topology, --ha)"),
    POSTGRES_FAILOVER("postgres-failover", "kill -9 the PostgreSQL primary (its server and its keeper, as a lost "
            + "machine) a third into the run; pg_auto_failover promotes the synchronous standby (the HA topology, --ha)"),
    SERVICE_INSTANCE_LOSS("service-instance-loss", "two service instances, readings in 4 partitions; the second is "
            + "killed with -9 a third into the run and stays down: the survivor takes up every partition"),
    TWO_INSTANCES("two-instances", "two service instances on the same broker and databases, readings partitioned by sensor; "
            + "200 more sensors with a 20 s timeout report once, fall silent until both are lost, then report again");

    static final int MALFORMED_COUNT = 100_000;
    /** The future-ts drill: every this-many-th sensor sends one reading this far ahead. */
    static final int FUTURE_EVERY = 100;
    static final long FUTURE_AHEAD_MS = 4 * 60_000;
    static final long READ_ONLY_MS = 30_000;
    static final long CLIENT_OUTAGE_MS = 5 * 60_000;
    static final long CLICKHOUSE_OUTAGE_MS = 2 * 60_000;
    /** The two-instances drill's sensors that fall silent: how many, and their own heartbeat timeout. */
    static final int SILENT_SENSORS = 200;
    static final int SILENT_TIMEOUT_S = 20;
    /** For the client drills: retries that span the 5-minute outage in about 7 minutes (default: up to 8 h apart). */
    static final String SHORT_RETRY_SCHEDULE = "--lockwatch.notify.retry-schedule=5s,15s,30s,60s,60s,60s,60s,60s,60s";

    final String id;
    final String description;

    Drill(String id, String description) {
        this.id = id;
        this.description = description;
    }

    static Drill parse(String id) {
        for (Drill d : values()) {
            if (d.id.equals(id.toLowerCase(Locale.ROOT))) {
                return d;
            }
        }
        throw new IllegalArgumentException("unknown drill " + id + "; one of " + names());
    }

    static String names() {
        return String.join(", ", java.util.Arrays.stream(values()).filter(d -> d != NONE).map(d -> d.id).toList());
    }

    /** Service arguments the drill needs on top of the benchmark's. */
    List<String> serviceArgs() {
        return this == HANGING_CLIENT || this == FAILING_CLIENT ? List.of(SHORT_RETRY_SCHEDULE) : List.of();
    }

    /** Whether the drill checks what was parked (and that nothing else was). */
    boolean parks() {
        return this == MALFORMED || this == FUTURE_TS || this == POSTGRES_READ_ONLY;
    }

    /** The HA drills: with --ha only. */
    boolean needsHa() {
        return this == RABBITMQ_NODE_LOSS || this == POSTGRES_FAILOVER;
    }

    /** Instances of the service to run. */
    int instances() {
        return this == TWO_INSTANCES || this == SERVICE_INSTANCE_LOSS ? 2 : 1;
    }
}
