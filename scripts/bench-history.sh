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
#      harness (mvn -B -q -Pbench test-compile, which also writes its classpath);
#   2. runs io.lockwatch.bench.HistoryBenchmark, which
#      - wipes its ClickHouse database and purges the history queue (unless --reuse applies), then starts the
#        service as a child process (java -Xmx512m -jar target/lockwatch-0.1.0-SNAPSHOT.jar
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
JAR=target/lockwatch-0.1.0-SNAPSHOT.jar
OUT=target/bench
PID_FILE="$OUT/service-history.pid"
LOCK=/tmp/lockwatch-bench.lock
VHOST=lockwatch-histbench
DB=lockwatch_histbench

log() { printf '[bench] %s\n' "$*"; }
psql_admin() { (cd / && runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 "$@"); }
die() { printf '[bench] %s\n' "$*" >&2; exit 1; }

for arg in "$@"; do
  case "$arg" in
    -h | --help) awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
  esac
done

if ! scripts/services.sh status >/dev/null 2>&1; then
  ((EUID == 0)) || die "RabbitMQ, PostgreSQL or ClickHouse is down: run scripts/services.sh up as root"
  log "starting the services (scripts/services.sh up)"
  scripts/services.sh up
fi

# the benchmark's own virtual host and databases (the service migrates the schemas into them)
if [[ "$(psql_admin -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'" 2>/dev/null)" != 1 ]]; then
  ((EUID == 0)) || die "database $DB is missing; create it as root: scripts/bench-history.sh"
  log "creating the database $DB (owner lockwatch)"
  psql_admin -d postgres -c "CREATE DATABASE $DB OWNER lockwatch"
fi
curl -fsS --max-time 30 --data-binary "CREATE DATABASE IF NOT EXISTS $DB" http://127.0.0.1:8123/ ||
  die "cannot create the ClickHouse database $DB"
if ! rabbitmqctl -q list_vhosts 2>/dev/null | grep -qx "$VHOST"; then
  ((EUID == 0)) || die "the RabbitMQ virtual host $VHOST is missing; create it as root: scripts/bench-history.sh"
  log "creating the RabbitMQ virtual host $VHOST (guest may use it)"
  rabbitmqctl -q add_vhost "$VHOST"
  rabbitmqctl -q set_permissions -p "$VHOST" guest '.*' '.*' '.*'
fi

if [[ ! -f "$JAR" ]] || [[ -n "$(find src/main pom.xml -newer "$JAR" -print -quit)" ]]; then
  log "building the service jar (mvn -B -q -DskipTests package)"
  # the pom binds surefire's skipTests to skipUnitTests, which -DskipTests alone does not override
  mvn -B -q -DskipTests -DskipUnitTests=true package
fi
log "compiling the harness (mvn -B -q -Pbench test-compile)"
mvn -B -q -Pbench test-compile
mkdir -p "$OUT"

HARNESS_PID=
stop_all() {
  local rc=$?
  trap - EXIT INT TERM
  # the harness stops the service itself (SIGTERM); this covers a harness that died or was interrupted
  if [[ -n "$HARNESS_PID" ]] && kill -0 "$HARNESS_PID" 2>/dev/null; then
    kill -TERM "$HARNESS_PID" 2>/dev/null || true
    wait "$HARNESS_PID" 2>/dev/null || true
  fi
  if [[ -f "$PID_FILE" ]]; then
    local pid
    pid=$(tr -dc '0-9' <"$PID_FILE")
    if [[ -n "$pid" ]] && grep -q lockwatch "/proc/$pid/cmdline" 2>/dev/null; then
      log "stopping the service (pid $pid, SIGTERM)"
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$PID_FILE"
  fi
  exit "$rc"
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# the code measured, for the report (BENCH_REVISION overrides, e.g. in an exported tree without git)
REVISION="${BENCH_REVISION:-}"
if [[ -z "$REVISION" ]]; then
  REVISION="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [[ -n "$(git status --porcelain -- src/main pom.xml 2>/dev/null)" ]]; then REVISION+=" + uncommitted changes"; fi
fi

# one measuring run at a time on this machine (held until this script exits)
exec 9>"$LOCK"
if ! flock -n 9; then
  log "waiting for $LOCK (another benchmark is measuring)"
  flock 9
fi
log "holding $LOCK"

# The harness runs in the background so that the traps above fire as soon as a signal arrives. It uses the
# service's own history classes (target/classes) for the ClickHouse-alone run and the store's queries.
java -Xmx1g -Dbench.clk_tck="$(getconf CLK_TCK)" -Dslf4j.internal.verbosity=ERROR \
  -Dbench.revision="$REVISION" \
  -cp "target/test-classes:target/classes:$(cat "$OUT/classpath.txt")" \
  io.lockwatch.bench.HistoryBenchmark --jar "$JAR" --out "$OUT" "$@" &
HARNESS_PID=$!
wait "$HARNESS_PID"
