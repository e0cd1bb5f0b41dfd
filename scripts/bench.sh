#!/usr/bin/env bash
#
# scripts/bench.sh — benchmark of lockwatch's whole pipeline (RabbitMQ -> service -> PostgreSQL state ->
# signed webhooks to local receivers; history to ClickHouse) against the real services on 127.0.0.1. It measures
# and prints figures; it asserts no timing.
#
# Usage:
#   scripts/bench.sh [--sensors 100000] [--clients 1000] [--links 200] [--changes 0.01] [--duration 60] [--rate 0]
#                           [--warmup 10] [--service-warmup 60] [--seed N] [--confirm-window 1000] [--diagnostics] [--isolated]
#                           [--instances 1] [--partitions N] [--service-arg --name=value ...] [--service-cpus C]
#                           [--drain N [--per-message M]] [--mqtt | --lorawan] [--receiver-delay-ms 0] [--max-events-per-request 1]
#                           [--hold-after-setup FILE] [--feed-pollers N [--feed-instance] [--feed-listener]] [--cpu-load C] [--queue-type quorum|classic] [--ha]
#
#   --sensors N      sensors registered (ids 'B' || lpad(to_hex(i), 10, '0'), i = 1..N)
#   --clients C      clients registered, each with its own webhook endpoint (http://127.0.0.1:<port>/c/<index>)
#                    on the harness's receiver, which checks each request's Standard Webhooks signature with the
#                    client's secret and records its arrival time
#   --links L        sensors linked to each client: client c gets sensors (c * L + j) mod N, j < L; by default
#                    every sensor has 2 clients
#   --changes P      probability that a reading flips its sensor's data (else it repeats it)
#   --duration S     seconds of publishing, for the raw ceiling and again for the service run
#   --rate R         readings/s published in the service run; 0 = as fast as possible
#                    (the raw ceiling always publishes as fast as possible); a paced run also measures RabbitMQ
#                    alone at that rate for 30 s (publish to consume of the same readings: the latency yardstick,
#                    printed beside the service's notification latency)
#   --warmup S       seconds left out of the steady-state medians at the start of each run (10)
#   --service-warmup S  seconds of readings published as in the service run, with the clients linked, before it and
#                    left out of every figure (60; 0 = none; never in drills): until the service has run its hot
#                    paths for a while, its JIT compiler takes a good part of its CPU (0.2 of 0.5 cores in the first
#                    minute of notifications); their changes are checked like the run's
#   --seed N         random seed of the readings (printed; random by default)
#   --confirm-window N  unconfirmed messages allowed per publisher, ceiling and service run alike (1000)
#   --diagnostics    mid-run, write top, pg_stat_activity and two thread dumps of the service to
#                    target/bench/diagnostics-<timestamp>.txt; and run the service with Java Flight Recorder
#                    from its start (settings=default) to target/bench/service-<timestamp>.jfr, written when it
#                    stops (service-2-<timestamp>.jfr for a second instance; open it with JDK Mission Control or
#                    `jfr print`; the timed run is its last minutes)
#   --instances N    service instances against the same broker and databases, 1 or 2 (2 for the two-instances
#                    drill)
#   --partitions N   the service's lockwatch.ingest.partitions: 1 = one readings queue; N = N queues by sensor id
#                    (consistent-hash exchange, single active consumer) shared out among the instances; by
#                    default 4 with two instances, else 1
#   --service-arg A  an extra argument for the service, repeatable, to compare settings without changing code
#                    (e.g. --service-arg --camel.metrics.enable-exchange-event-notifier=false); with one dash, a
#                    JVM option of the service (e.g. --service-arg -XX:TieredStopAtLevel=1)
#   --service-cpus C for the timed run, each service instance is moved into a CPU cgroup of its own limited to C
#                    cores (needs root and a cgroup cpu controller): stands in for instances on machines of their
#                    own, to show what a second instance adds when the service is what limits the rate (0 = no
#                    limit). The seed and the warm-up run unlimited: they are not measured, and limited they took
#                    minutes (pre-seed 107-192 s at 0.15 cores instead of 15 s)
#   --drain N        catch-up instead of the live run: after the pre-seed and the clients, the service is stopped
#                    (SIGTERM), N readings are queued, and the service is started cold to drain them; measured in the
#                    same run, a plain consumer drains a backlog of N on a temporary queue (the drain ceiling). Prints
#                    "= X of drain ceiling", the cold start (healthy, first reading applied, the first minute's rate),
#                    CPU µs per reading by process, heap, and the same correctness checks; figures to
#                    target/bench/drain-<timestamp>.json
#                    With --drill kill (scripts/drill.sh kill --drain N): kill -9 a third into the drain, started
#                    again, the rest drained, and everything checked by the databases
#   --per-message M  with --drain and one readings queue: the backlog's messages each hold a JSON array of M
#                    readings (a gateway's, up to 1000), N readings in all; the drain ceiling stays one message each
#   --mqtt           the warm-up and the timed run publish as MQTT sensors do (QoS 1 to lockwatch/readings/<id>,
#                    RabbitMQ's MQTT plugin on 127.0.0.1:1883, user <vhost>:guest), not over AMQP; the seed and the
#                    raw ceiling stay AMQP, so the ratio compares MQTT readings with the same yardstick
#   --lorawan        the warm-up and the timed run publish as a LoRaWAN network does: each reading a ChirpStack v4
#                    uplink event of its sensor's device (every sensor a Dragino LDS02, profile dragino-lds02, its DevEUI
#                    000000<its hex id>) heard by two gateways, each event published twice (a frame that reaches the
#                    adapter twice: every second copy must be a duplicate), QoS 1 to Mosquitto (scripts/services.sh,
#                    127.0.0.1:1884); the service's ChirpStack adapter takes them. --rate counts uplinks (each two
#                    messages); the readings/s printed count messages. Prints the duplicates applied (must be 0); the
#                    raw ceiling stays the AMQP one
#   --receiver-delay-ms D  every client's endpoint answers D ms after a request arrived (0: at once), to stand in for
#                    an endpoint across the internet; latencies are still taken at the request's arrival
#   --max-events-per-request B  every client asks for batched delivery: up to B events per request, a JSON array
#                    (1, the default: one event per request, as every client has unless it asks)
#   --feed-pollers N the first N clients also pull their feeds, each keeping a long poll open (wait 30 s) from the
#                    service warm-up (so the JIT has compiled their paths too) through the timed run, each with a
#                    client-read key of its own, from a process of their own at nice 19 (CPU
#                    group "pullers"): prints their feed latency (event to answer received) beside their webhooks',
#                    and the service's held polls, threads and heap mid-run
#   --feed-instance  with --feed-pollers: the pollers ask an instance for client traffic of their own
#                    (lockwatch.pipeline.enabled=false, log service-api.log, CPU group "api-instance") started beside
#                    the one that applies and delivers, as an operator with many pulling clients would run it
#   --feed-listener  with --feed-pollers: the pollers' long polls go to the feed listener (lockwatch.feed.listener.port,
#                    a port of the service's own for the feed) instead of its web server; keys and snapshots to the API
#   --cpu-load C     a process beside the timed run keeps C cores busy (0 to 1), in bursts of 2 ms, at normal priority
#                    (CPU group "load"): a yardstick for a figure taken beside other work, e.g. the run without
#                    --feed-pollers with as much CPU taken as the pollers take
#   --hold-after-setup FILE  once the sensors are registered, wait until FILE exists, so that a script beside the run
#                    writes data of its own on an idle machine before anything is measured (bench-retention.sh)
#   --queue-type T   the type of the service's queues (lockwatch.amqp.queue-type) and of the raw ceiling's queue, so
#                    that the yardstick is the same kind of queue: quorum (the default, as on the external profile) or
#                    classic
#   --ha             against the HA topology's RabbitMQ cluster (scripts/services.sh --ha up, started if down): the
#                    service is given its three nodes, the harness publishes, consumes the ceiling and measures through
#                    the first (127.0.0.1:5681); the CPU of "rabbitmq" is every node's (beam.smp), the single node's
#                    idle one too
#   --isolated       use a RabbitMQ virtual host 'lockwatch-bench' and PostgreSQL and ClickHouse databases
#                    'lockwatch_bench' of the benchmark's own (created here if missing, which needs root) instead
#                    of the dev ones, so that neither the dev data nor integration tests running meanwhile are
#                    touched
#
# WARNING: without --isolated this WIPES THE LOCAL DEV DATABASE lockwatch: TRUNCATE sensors, sensor_events
# CASCADE (every sensor, its state, its events, notifications and client links), then registers the
# benchmark's sensors; it PURGES the queue lockwatch.readings; and the service's history of the run goes to
# the dev ClickHouse database. Do not run it so while another lockwatch or
# an integration test (mvn verify -Pit) uses these services: they would consume each other's readings.
#
# What it does:
#   1. starts the services if they are down (scripts/services.sh up, as root); builds the service jar if it is
#      missing or older than src/main or pom.xml (mvn -B -q -DskipTests package, tests
#      not run); compiles the harness
#      (harness/, mvn -B -q -Pbench test-compile, which also writes its classpath: amqp-client and the PostgreSQL
#      driver only, no Spring);
#   2. runs io.lockwatch.bench.PipelineBenchmark, which
#      - starts the service as a child process, java -Xmx512m -XX:+UseParallelGC -jar target/lockwatch-0.1.0-SNAPSHOT.jar
#        --spring.profiles.active=external --server.port=<free port>, output to target/bench/service.log,
#        and waits for /actuator/health UP (the service migrates the schema);
#      - registers the sensors with one INSERT ... SELECT over generate_series and purges the queue;
#      - raw ceiling: RabbitMQ alone for --duration s, a plain amqp-client publisher (persistent, publisher
#        confirms, --confirm-window outstanding) and consumer (prefetch 2000, one multiple-ack every 1000 messages, as the
#        service acks per batch of 1000) on a temporary durable topic exchange and queue, deleted afterwards;
#      - pre-seeds one reading per sensor and waits until the service has applied them all; only then registers
#        the clients and links (so the seed's first readings notify nobody);
#      - warms the service up: --service-warmup s of readings as in the service run, then waits until they are
#        applied, in history and notified;
#      - service run: publishes JSON readings {"sensor_id","data","ts"} to the exchange lockwatch.readings,
#        routing key = sensor id, same settings, for --duration s; every second it reads the service's
#        lockwatch_readings_received_total and heap from /actuator/prometheus, the queue depth, and the CPU
#        of the service, RabbitMQ, PostgreSQL and itself from /proc; then waits until the queue is drained;
#      - waits until history has caught up (the service's written counter) and no notification is pending;
#      - checks sensor_state and the count of sensor_events against the readings it published, and the
#        notifications: every change of the timed run received exactly once per linked client after
#        de-duplication by webhook-id, with a valid signature and the right state, none for a repeat, in sequence
#        order per client and sensor and ending with the sensor's newest change; superseded notifications are
#        allowed only for a client whose endpoint misbehaved (the client drills' client 0; then accounted for by
#        the database's 'superseded' count) and printed by reason; a webhook-id twice only where a drill kills
#        the service or restarts PostgreSQL;
#      - prints a summary (medians of per-second rates after the warm-up; notification latency = arrival at the
#        receiver minus the event's occurred_at, i.e. the reading's measured time, set when it was published)
#        and writes the same figures to target/bench/pipeline-<timestamp>.json and a plot (readings/s and
#        latency per second) to target/bench/pipeline-<timestamp>.png;
#      - stops the service with SIGTERM (also on failure or Ctrl-C).
#   Exit status: 0 when correct, 1 when the result differs from the reference or the run failed, 2 on bad options.
#
# The machine's cores are shared by RabbitMQ, PostgreSQL, the service and the harness: compare the service
# with the raw ceiling of the same run, not with figures from another machine.

set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib/bench.sh
bench_help "$0" "$@"

for arg in "$@"; do
  if [[ "$arg" == --ha ]]; then BENCH_HA=1; fi
done
bench_services
for arg in "$@"; do
  if [[ "$arg" == --isolated ]]; then bench_isolation lockwatch-bench lockwatch_bench; fi
done
bench_build
bench_run "$BENCH_OUT/service.pid" target/test-classes: PipelineBenchmark "$@"
