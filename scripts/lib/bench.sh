# scripts/lib/bench.sh — what the benchmark scripts (scripts/bench.sh, bench-heartbeat.sh, bench-history.sh)
# share: the services up, a virtual host and databases of the benchmark's own, the jar and the harness built, one
# measuring run at a time on the machine, and the harness run with traps that stop the service whatever happens.
# Sourced from the repository root, after `set -euo pipefail`.

BENCH_JAR=target/lockwatch-0.1.0-SNAPSHOT.jar
BENCH_OUT=target/bench
BENCH_LOCK=/tmp/lockwatch-bench.lock

log() { printf '[bench] %s\n' "$*"; }
die() { printf '[bench] %s\n' "$*" >&2; exit 1; }
psql_admin() {
  if ((${BENCH_HA:-0})); then
    # the HA topology's pair: whichever node is the primary (loopback is trusted there)
    local port
    for port in 5441 5442; do
      if [[ "$( (cd / && runuser -u postgres -- psql -X -h 127.0.0.1 -p "$port" -d postgres -tAc 'SELECT pg_is_in_recovery()') 2>/dev/null)" == f ]]; then
        (cd / && runuser -u postgres -- psql -X -q -h 127.0.0.1 -p "$port" -v ON_ERROR_STOP=1 "$@")
        return
      fi
    done
    die "the HA topology's PostgreSQL has no primary"
  fi
  (cd / && runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 "$@")
}

# bench_help SCRIPT ARGS...: with -h or --help, prints the script's header comment and exits
bench_help() {
  local script=$1
  shift
  for arg in "$@"; do
    case "$arg" in
      -h | --help) awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$script"; exit 0 ;;
    esac
  done
}

# starts RabbitMQ, PostgreSQL and ClickHouse if one is down (needs root)
bench_services() {
  if ! scripts/services.sh status >/dev/null 2>&1; then
    ((EUID == 0)) || die "RabbitMQ, PostgreSQL or ClickHouse is down: run scripts/services.sh up as root"
    log "starting the services (scripts/services.sh up)"
    scripts/services.sh up
  fi
  if ((BENCH_HA)) && ! scripts/services.sh --ha status >/dev/null 2>&1; then
    ((EUID == 0)) || die "the HA topology is down: run scripts/services.sh --ha up as root"
    log "starting the HA topology (scripts/services.sh --ha up)"
    scripts/services.sh --ha up
  fi
}

# --ha: the benchmark's broker is the HA topology's RabbitMQ cluster (scripts/lib/ha.sh), managed through its first node
BENCH_HA=0
bench_rabbitmqctl() { if ((BENCH_HA)); then rabbitmqctl -n lwha1@localhost "$@"; else rabbitmqctl "$@"; fi; }

# bench_isolation VHOST DATABASE: the benchmark's own RabbitMQ virtual host and PostgreSQL and ClickHouse
# databases, created if missing (the service migrates the schemas into them)
bench_isolation() {
  local vhost=$1 db=$2 script=${0#./}
  if [[ "$(psql_admin -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'" 2>/dev/null)" != 1 ]]; then
    ((EUID == 0)) || die "database $db is missing; create it as root: $script"
    log "creating the database $db (owner lockwatch)"
    psql_admin -d postgres -c "CREATE DATABASE $db OWNER lockwatch"
  fi
  curl -fsS --max-time 30 --data-binary "CREATE DATABASE IF NOT EXISTS $db" http://127.0.0.1:8123/ ||
    die "cannot create the ClickHouse database $db"
  if ! bench_rabbitmqctl -q list_vhosts 2>/dev/null | grep -qx "$vhost"; then
    ((EUID == 0)) || die "the RabbitMQ virtual host $vhost is missing; create it as root: $script"
    log "creating the RabbitMQ virtual host $vhost (guest may use it)"
    bench_rabbitmqctl -q add_vhost "$vhost"
    bench_rabbitmqctl -q set_permissions -p "$vhost" guest '.*' '.*' '.*'
  fi
  # the service declares its queues, of the type it is configured with (lockwatch.amqp.queue-type): a run starts
  # with none left by an earlier one, of another type or with the backlog of a run cut short
  if ((EUID == 0)); then
    local q
    for q in $(bench_rabbitmqctl -q list_queues -p "$vhost" name 2>/dev/null | grep '^lockwatch\.' || true); do
      bench_rabbitmqctl -q delete_queue -p "$vhost" "$q" >/dev/null
    done
  fi
}

# one measuring run on the machine at a time, held until the script exits; taken before the build too, since a
# build is as heavy as what it would disturb (taking it again on the same descriptor returns at once)
bench_lock() {
  exec 9>"$BENCH_LOCK"
  if ! flock -n 9; then
    log "waiting for $BENCH_LOCK (another benchmark is measuring)"
    flock 9
  fi
}

# the service jar if it is missing or older than the sources, and the harness with its classpath
bench_build() {
  bench_lock
  if [[ ! -f "$BENCH_JAR" ]] || [[ -n "$(find src/main pom.xml -newer "$BENCH_JAR" -print -quit)" ]]; then
    log "building the service jar (mvn -B -q -DskipTests package)"
    mvn -B -q -DskipTests package
  fi
  log "compiling the harness (mvn -B -q -Pbench test-compile)"
  mvn -B -q -Pbench test-compile
  mkdir -p "$BENCH_OUT"
}

BENCH_HARNESS_PID=
BENCH_PID_FILE=
# the harness stops the service itself (SIGTERM); this covers a harness that died or was interrupted
bench_stop_all() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n "$BENCH_HARNESS_PID" ]] && kill -0 "$BENCH_HARNESS_PID" 2>/dev/null; then
    kill -TERM "$BENCH_HARNESS_PID" 2>/dev/null || true
    wait "$BENCH_HARNESS_PID" 2>/dev/null || true
  fi
  if [[ -n "$BENCH_PID_FILE" && -f "$BENCH_PID_FILE" ]]; then
    local pid
    pid=$(tr -dc '0-9' <"$BENCH_PID_FILE")
    if [[ -n "$pid" ]] && grep -q lockwatch "/proc/$pid/cmdline" 2>/dev/null; then
      log "stopping the service (pid $pid, SIGTERM)"
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$BENCH_PID_FILE"
  fi
  exit "$rc"
}

# bench_run PID_FILE CLASSPATH_PREFIX CLASS ARGS...: holds the machine's benchmark lock, then runs the harness
# class (in the background, so that the traps fire as soon as a signal arrives) with the jar, the output
# directory and ARGS; PID_FILE is where the harness writes the service's pid; BENCH_HARNESS_JVM_OPTIONS: options
# of the harness's own JVM
bench_run() {
  BENCH_PID_FILE=$1
  local classpath=$2 class=$3
  shift 3
  trap bench_stop_all EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  # the code measured, for the report (BENCH_REVISION overrides, e.g. in an exported tree without git)
  local revision="${BENCH_REVISION:-}"
  if [[ -z "$revision" ]]; then
    revision="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    if [[ -n "$(git status --porcelain -- src/main pom.xml 2>/dev/null)" ]]; then revision+=" + uncommitted changes"; fi
  fi

  bench_lock

  java -Xmx1g ${BENCH_HARNESS_JVM_OPTIONS:-} -Dbench.clk_tck="$(getconf CLK_TCK)" -Dslf4j.internal.verbosity=ERROR \
    -Dbench.revision="$revision" \
    -cp "${classpath}$(cat "$BENCH_OUT/classpath.txt")" \
    "io.lockwatch.bench.$class" --jar "$BENCH_JAR" --out "$BENCH_OUT" "$@" &
  BENCH_HARNESS_PID=$!
  wait "$BENCH_HARNESS_PID"
}

# For scripts that act on a bench.sh run while it goes on (bench-reimport-under-load.sh, bench-retention.sh):
# bench_beside OUT ARGS...: starts scripts/bench.sh --isolated ARGS in the background, its output shown and kept in
# OUT/bench.log, stopped if the caller ends first
bench_beside() {
  BESIDE_LOG="$1/bench.log"
  shift
  mkdir -p "$(dirname "$BESIDE_LOG")"
  : > "$BESIDE_LOG"
  scripts/bench.sh --isolated "$@" > >(tee "$BESIDE_LOG") 2>&1 &
  BESIDE_PID=$!
  trap 'kill $BESIDE_PID 2>/dev/null || true' EXIT INT TERM
}

# bench_beside_reached LINE: waits until the run has printed LINE; fails if it ended before
bench_beside_reached() {
  until grep -q "$1" "$BESIDE_LOG"; do
    kill -0 "$BESIDE_PID" 2>/dev/null || die "bench.sh ended before: $1"
    sleep 0.5
  done
}

# the running service's base URL, as the run printed it (once "service started" is in its log)
bench_beside_service() {
  grep -o 'service started (pid [0-9]*, http://[0-9.:]*' "$BESIDE_LOG" | tail -1 | sed 's/.*, //'
}
