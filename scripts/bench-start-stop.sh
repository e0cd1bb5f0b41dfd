#!/usr/bin/env bash
# Times the packaged service on the embedded default from launch to health UP, then from SIGTERM to exit, and
# counts the WARN and ERROR lines of each, while a probe asks /actuator/health every 0.25 s as an orchestrator's
# would. Prints the figures; judges nothing.
#
#   scripts/bench-start-stop.sh DATA_DIR [PORT] [-- extra java options]
#
# DATA_DIR: a directory that does not exist yet gives a first start (initdb); run it again on the same directory
# for a start on existing data. The service's log is DATA_DIR.log.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:?DATA_DIR}; shift
PORT=${1:-18097}; [ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
# BENCH_JAR: another jar, e.g. the extracted one of a class data sharing (CDS) archive; BENCH_RUN=mvn: the README's
# run command instead, `mvn spring-boot:run`, the java options ignored
if [ "${BENCH_RUN:-jar}" != mvn ]; then
  JAR=${BENCH_JAR:-$(ls target/lockwatch-*.jar 2>/dev/null | grep -v original | head -1 || true)}
  [ -n "$JAR" ] || { echo "no service jar in target/: mvn -DskipTests package first" >&2; exit 2; }
fi
LOG="$DATA.log"
: > "$LOG"
FIRST=$([ -d "$DATA" ] && echo "existing data directory" || echo "first start (initdb)")
STARTED=$(date +%s%N)
ARGS=(--server.port="$PORT" --lockwatch.embedded.data-dir="$DATA" --lockwatch.embedded.mqtt-port=0)
if [ "${BENCH_RUN:-jar}" = mvn ]; then
  # its own process group, so that SIGTERM reaches the application's JVM as Ctrl-C would
  setsid mvn -B -ntp -q spring-boot:run -Dspring-boot.run.arguments="${ARGS[*]}" > "$LOG" 2>&1 &
else
  java "$@" -jar "$JAR" "${ARGS[@]}" > "$LOG" 2>&1 &
fi
SERVICE=$!
trap 'kill -- -$SERVICE 2>/dev/null || kill $SERVICE 2>/dev/null || true' EXIT
until curl -s -m 1 "http://127.0.0.1:$PORT/actuator/health" 2>/dev/null | grep -q '^{"status":"UP"'; do
  kill -0 $SERVICE 2>/dev/null || { echo "the service exited; see $LOG" >&2; tail -20 "$LOG" >&2; exit 1; }
  [ $(( $(date +%s%N) - STARTED )) -lt 300000000000 ] || { echo "not UP after 300 s; see $LOG" >&2; tail -20 "$LOG" >&2; exit 1; }
  sleep 0.25
done
UP=$(( ($(date +%s%N) - STARTED) / 1000000 ))
WARN_START=$(awk '$2 == "WARN" || $2 == "ERROR"' "$LOG" | wc -l)
FROM=$(( $(wc -l < "$LOG") + 1 ))
STOPPING=$(date +%s%N)
if [ "${BENCH_RUN:-jar}" = mvn ]; then kill -TERM -- -$SERVICE; else kill -TERM $SERVICE; fi
wait $SERVICE || true
trap - EXIT
STOPPED=$(( ($(date +%s%N) - STOPPING) / 1000000 ))
WARN_STOP=$(tail -n +"$FROM" "$LOG" | awk '$2 == "WARN" || $2 == "ERROR"' | wc -l)
echo "$FIRST: health UP in $UP ms ($(grep -o 'Started LockwatchApplication in [0-9.]* seconds' "$LOG" | head -1)), $WARN_START WARN/ERROR lines"
echo "SIGTERM: exited in $STOPPED ms, $WARN_STOP WARN/ERROR lines"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
