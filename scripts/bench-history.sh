#!/usr/bin/env bash
#
# scripts/bench-history.sh — benchmark of lockwatch's readings history in ClickHouse (issue #6): the sustained
# insert rate of the history route and the latency of the history queries over the filled table, against the
# real services on 127.0.0.1. It measures and prints figures; it asserts no timing.
#
# Usage:
#   scripts/bench-history.sh [--rows 10000000] [--sensors 100000] [--days 30] [--queries 1000]
#                            [--stats-queries 100] [--events-per-sensor 10] [--per-message 1000]
#                            [--batch-size 5000] [--max-backlog 100] [--ceiling 30] [--warmup 10] [--seed 1]
#                            [--reuse] [--service-arg --name=value ...]
#
#   --rows N          readings written to history through the service (10,000,000)
#   --sensors N       sensors they are spread over, at random (ids 'H' and 10 hex digits)
#   --days D          their measured times span the D days before the fill, evenly (one every days/N), so
#                     that range queries cross partitions (ClickHouse partitions readings by month)
#   --per-message N   readings per history message, as ingest hands over one message per batch (1000)
#   --batch-size N    the service's lockwatch.history.batch-size (readings per ClickHouse insert, 5000), also used
#                     by the ClickHouse-alone run
#   --max-backlog N   publishing pauses while N messages are ready in the history queue (100), so the service
#                     never waits for work and the queue never holds the whole fill
#   --events-per-sensor N  events per sensor, for the per-day stats queries (10; 0 = none)
#   --queries N       random range queries, timed through the API and again through the store (1000)
#   --stats-queries N per-day stats queries over the whole window, timed the same two ways (100)
#   --ceiling S       seconds of the ClickHouse-alone insert run (30; 0 = skipped)
#   --warmup S        seconds at the start of the fill left out of the steady-state figures (10)
#   --seed N          seed of the readings, events and queries (1); the same seed and sizes give the same table
#   --reuse           if the table holds a finished fill of the same --rows, --sensors, --days, --seed and
#                     --events-per-sensor, skip the ClickHouse-alone run and the fill and only query it
#                     (otherwise fill as usual)
#   --service-arg A   an extra argument for the service, repeatable
#                     (e.g. --service-arg --lockwatch.history.prefetch=100)
#
# Isolation: everything happens in the RabbitMQ virtual host 'lockwatch-histbench' and the PostgreSQL and
# ClickHouse databases 'lockwatch_histbench' (created here if missing, which needs root). A fill (any run
# without a reusable --reuse) DROPS AND RECREATES the ClickHouse database lockwatch_histbench, purges the queue
# lockwatch.history.readings of that virtual host and truncates sensor_events of that PostgreSQL database; the
# ClickHouse-alone run uses a scratch database lockwatch_histbench_ceiling, dropped afterwards. The dev
# databases, the '/' virtual host and other benchmarks' databases are not touched.
#
# Measuring takes the lock /tmp/lockwatch-bench.lock (flock), so benchmarks on this machine run one at a time;
# the script says when it waits for it. Building and compiling happen before, without the lock.
#
# What it does:
#   1. starts the services if they are down (scripts/services.sh up, as root); creates the virtual host and
#      databases; builds the service jar if it is missing or older than src/main or pom.xml; compiles the
#      harness (harness/, mvn -B -q -Pbench test-compile, which also writes its classpath);
#   2. runs io.lockwatch.bench.HistoryBenchmark, which
#      - wipes its ClickHouse database and purges the history queue (unless --reuse applies), then starts the
#        service as a child process (java -Xmx512m -XX:+UseParallelGC -jar target/lockwatch-0.1.0-SNAPSHOT.jar
#        --spring.profiles.active=external on the isolated virtual host and databases, output to
#        target/bench/service-history.log) and waits for /actuator/health UP (the service creates its
#        ClickHouse schema);
#      - ClickHouse alone: the service's store class (ClickHouseHistoryStore.writeReadings) inserts the same
#        readings in --batch-size batches, one after the other, into the scratch database for --ceiling s;
#      - events: one INSERT ... SELECT of sensors x events into PostgreSQL's sensor_events; the service's export
#        route copies them to ClickHouse; it waits until all are there;
#      - the fill: publishes the readings, --per-message to a message, exactly as ingest does (a JSON list of
#        history records, persistent, publisher confirms) straight to the history queue, bypassing ingest (whose
#        own ceiling is far lower); every second it samples the service's lockwatch_history_readings_written_total
#        and heap (/actuator/prometheus), the queue, ClickHouse's parts and rows (system.parts), and the CPU of
#        each process group (/proc); then waits until all are written;
#      - checks that exactly --rows readings are queryable (SELECT count() FROM readings FINAL, as the store reads)
#        and the events; records the fill in the table bench_history_fill for --reuse;
#      - queries, one at a time: --queries random (sensor, range) pairs, a third each 1 day, 7 days and the
#        whole window long, placed at random: first through GET /api/v1/sensors/{id}/readings?from&to&limit=100
#        (bearer token, JSON), then through the store's readings() over JDBC; the next page (cursor) of every
#        range with more than 100 readings, both ways; --stats-queries GET /api/v1/sensors/{id}/stats over the
#        window and the store's dailyCounts(); every answer is checked (the sensor's rows only, in range, newest
#        first, pages that continue each other, API equal to store, stats adding up); ClickHouse's own duration
#        and rows read of the store's queries come from system.query_log (logged in the harness's session only);
#      - prints a summary and writes the figures to target/bench/history-<timestamp>.json;
#      - stops the service with SIGTERM (also on failure or Ctrl-C).
#   Exit status: 0 when the counts and answers are right, 1 otherwise or when the run failed, 2 on bad options.

set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib/bench.sh
bench_help "$0" "$@"

bench_services
bench_isolation lockwatch-histbench lockwatch_histbench
bench_build
# the harness also uses the service's own history classes (target/classes) for the ClickHouse-alone run and the
# store's queries
bench_run "$BENCH_OUT/service-history.pid" target/test-classes:target/classes: HistoryBenchmark "$@"
