#!/usr/bin/env bash
#
# scripts/bench-heartbeat.sh — benchmark of lockwatch's heartbeat at scale (issue 5): many registered sensors, of
# which a part fall silent at one moment while the others keep reporting; against the real services on 127.0.0.1
# and the real service jar. It measures and prints figures; it asserts no timing.
#
# Usage:
#   scripts/bench-heartbeat.sh [--sensors 1000000] [--silent 100000] [--timeout 120] [--rate 2000]
#                              [--scan-interval 10] [--phase worst|any] [--restore 1000] [--alarm] [--escalate S]
#                              [--maintenance] [--max-wait 300] [--seed N]
#                              [--confirm-window 1000] [--diagnostics] [--service-arg --name=value ...]
#
#   --sensors N        sensors registered (ids 'B' || lpad(to_hex(i), 10, '0'), i = 1..N)
#   --silent N         of which N, chosen at random, report once at one moment T and then fall silent
#   --timeout S        the silent sensors' own heartbeat timeout (heartbeat_timeout_seconds); the others keep the
#                      service's default (1 h), so none of them may be declared lost during the run
#   --rate R           readings/s published to the other sensors from the moment they are online to the end of the
#                      run (0 = as fast as possible; the scan then waits while more than
#                      lockwatch.heartbeat.max-backlog readings are queued, by design)
#   --scan-interval S  the service's heartbeat scan interval (lockwatch.heartbeat.scan-interval), 10 s by default
#   --phase P          worst (default): T is chosen so that the timeout expires 0.5 s after a scan fired (read from
#                      Quartz's job store), so the silent sensors just miss that scan and wait a whole interval for
#                      the next; any: T is whenever the harness gets there
#   --restore N        lost sensors that report once more afterwards; each must get exactly one restored event
#   --alarm            open-door alarms instead (issue 19): the --silent sensors open their door (data 0) at T and
#                      report nothing more, with open_alarm_seconds = --timeout; each sensor.alarm_raised is timed
#                      from T + threshold; --restore of the alarmed doors then close, each must get exactly one
#                      sensor.alarm_cleared; --scan-interval is the alarm scan's (5 s by default); the check counts
#                      the active alarms instead of connectivity. Figures: target/bench/alarms-<timestamp>.json
#   --escalate S       with --alarm (issue 40): each open door has a chain of one step after S s to a paused client;
#                      every step must be recorded once, and is timed from its due time (target p99 <= 15 s)
#   --maintenance      (issue 40) a maintenance window is open over the silent sensors from before T, with a paused
#                      client linked to them: no connection event may be notified meanwhile; once the --restore ones
#                      are back the harness ends it, and each sensor still silent must get exactly one
#                      connection_lost, timed from the end (target all within 30 s)
#   --max-wait S       how long after the timeout expired to wait for all lost events before giving up
#   --seed N           random seed of the silent sensors' choice and of the readings (printed; random by default)
#   --confirm-window N unconfirmed messages allowed per publisher (1000)
#   --diagnostics      during detection, PostgreSQL's sessions once a second to
#                      target/bench/heartbeat-diagnostics-<timestamp>.txt
#   --service-arg A    an extra argument for the service, repeatable, to compare settings without changing code
#                      (e.g. --service-arg --lockwatch.heartbeat.scan-batch=5000)
#
# Isolation: it always uses a RabbitMQ virtual host 'lockwatch-hbbench' and PostgreSQL and ClickHouse databases
# 'lockwatch_hbbench' of its own (created here if missing, which needs root), so neither the dev data nor other
# benchmarks or integration tests running meanwhile are touched. Each run WIPES lockwatch_hbbench's registry,
# state and events (TRUNCATE sensors, sensor_events CASCADE) and purges that vhost's readings queue.
#
# Exclusive use of the machine: the measuring part holds the lock /tmp/lockwatch-bench.lock (flock), shared with
# the other benchmarks, and says so while it waits; building and compiling happen before, without it. A run with
# the defaults holds it for about 8 minutes.
#
# What it does:
#   1. starts the services if they are down (scripts/services.sh up, as root); creates the vhost and databases;
#      builds the service jar if it is missing or older than src/main or pom.xml; compiles the harness
#      (harness/, mvn -B -q -Pbench test-compile, which also writes its classpath);
#   2. runs io.lockwatch.bench.HeartbeatBenchmark, which
#      - starts the service as a child process (java -Xmx512m -XX:+UseParallelGC -jar target/lockwatch-0.1.0-SNAPSHOT.jar
#        --spring.profiles.active=external, pointed at the isolated vhost and databases), output to
#        target/bench/heartbeat-service.log, and waits for /actuator/health UP;
#      - registers the sensors with one INSERT ... SELECT; gives the silent ones their own timeout (one UPDATE of
#        sensors, as registering them with heartbeat_timeout_seconds would store it);
#      - brings the other sensors online through ingest: one reading each to the exchange lockwatch.readings,
#        and waits until the service has applied them all;
#      - starts publishing readings to random other sensors at --rate, until the end of the run;
#      - the silent sensors each publish one reading, all with the same measured time T (with --phase worst, the
#        harness first waits up to one scan interval for the T that makes their expiry fall just after a scan);
#        once all are online,
#        polls PostgreSQL every 100 ms for new sensor.connection_lost events and notes when each became visible;
#      - when all are visible (or --max-wait after T + timeout), waits two more scans, sends one reading to
#        --restore of them and waits until they are online again;
#      - stops publishing, waits until ingest has applied every reading, and checks in PostgreSQL: exactly one
#        lost event for each silent sensor, at its last reading + timeout, none for any other sensor, no
#        duplicate; exactly one restored event for each sensor that reported again; every sensor's connectivity;
#        one state change event per change of data published;
#      - prints a summary: per silent sensor, "lost event visible" − "last reading + timeout" (p50, p99, max), the
#        time from the first to the last lost event, how many came within timeout + scan interval + 5 s, the
#        ingest rate during detection, CPU, correctness; and writes the figures, with per-second samples, to
#        target/bench/heartbeat-<timestamp>.json;
#      - stops the service with SIGTERM (also on failure or Ctrl-C).
#   Exit status: 0 when correct, 1 when the check failed or the run failed, 2 on bad options.

set -euo pipefail

cd "$(dirname "$0")/.."
. scripts/lib/bench.sh
bench_help "$0" "$@"

bench_services
bench_isolation lockwatch-hbbench lockwatch_hbbench
bench_build
bench_run "$BENCH_OUT/service.pid" target/test-classes: HeartbeatBenchmark "$@"
