#!/usr/bin/env bash
#
# scripts/bench-embedded.sh — what a new user measures first (issue 55): the embedded default (nothing installed),
# one client linked to every sensor, and every sensor's state posted over HTTP in arrays. It prints, for each
# round, the time from the first POST to the last webhook heard, notifications a second, their latency and the
# CPU each cost the service and its PostgreSQL; it asserts no timing, only that every change was heard once,
# signed and in order per sensor.
#
# Usage:
#   scripts/bench-embedded.sh [--sensors 5000] [--per-request 1000] [--rounds 3] [--receiver-delay-ms 0]
#                             [--service-arg --name=value ...]
#
#   --sensors N          sensors, all linked to the one client (5,000)
#   --per-request N      readings in each POST /api/v1/readings (1000, its most)
#   --rounds N           the first states, then every door the other way, N - 1 times (3)
#   --receiver-delay-ms  the client's endpoint answers this long after a request arrives (0)
#   --external           the same service on the `external` profile instead, beside RabbitMQ, PostgreSQL and
#                        ClickHouse (scripts/services.sh up), in the virtual host lockwatch-bench and the databases
#                        lockwatch_bench, whose sensors, clients and events are deleted first: what the embedded
#                        broker and database cost, measured beside the real ones
#   --service-arg A      an extra argument for the service, repeatable
#   --jvm-option O       an extra option for its JVM, repeatable (a profiler's agent, say)
#
# Without --external it needs nothing but Java and Maven: the service runs from the packaged jar on throw-away data
# under target/bench. Either way with the JVM options `mvn spring-boot:run` gives it (C1 only; --jvm-option
# -XX:TieredStopAtLevel=4 for both compilers, as `java -jar` runs).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh
bench_help "$0" "$@"
EXTERNAL=0
for arg in "$@"; do [[ "$arg" == --external ]] && EXTERNAL=1; done
if ((EXTERNAL)); then
  bench_services
  bench_isolation lockwatch-bench lockwatch_bench
  # an earlier run's sensors and clients would be notified too
  psql_admin -d lockwatch_bench -c "DO \$\$ BEGIN IF to_regclass('public.sensors') IS NOT NULL THEN
    TRUNCATE sensors, clients, sensor_events, alarms CASCADE; END IF; END \$\$"
fi
# the harness, which is the client's endpoint here, compiles with C1 only: its own JIT warm-up on the two cores it
# shares with the service took 0.3 ms of CPU a notification in the first round (its CPU is printed beside)
export BENCH_HARNESS_JVM_OPTIONS="${BENCH_HARNESS_JVM_OPTIONS:--XX:TieredStopAtLevel=1}"
bench_build
bench_run "$BENCH_OUT/embedded.pid" target/test-classes: EmbeddedBenchmark "$@"
