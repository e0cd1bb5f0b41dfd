#!/usr/bin/env bash
# Runs the README walkthrough against the packaged service on the embedded default (fresh, throw-away data),
# as CI does after the unit tests: starts it, waits for readiness, runs scripts/walkthrough.sh, stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=$(ls target/lockwatch-*.jar | grep -v original | head -1)
[ -n "$JAR" ] || { echo "no packaged jar: run mvn verify first" >&2; exit 1; }
PORT=${WALKTHROUGH_PORT:-18080}
LOG=target/walkthrough-service.log
java -jar "$JAR" --server.port="$PORT" --lockwatch.embedded.data-dir=target/walkthrough-data \
  --lockwatch.embedded.ephemeral=true --lockwatch.routes.dir=target/walkthrough-routes > "$LOG" 2>&1 &
SERVICE=$!
trap 'kill $SERVICE 2>/dev/null; wait $SERVICE 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$PORT/actuator/health/readiness" >/dev/null 2>&1 && break
  kill -0 $SERVICE 2>/dev/null || { echo "the service exited; see $LOG" >&2; tail -20 "$LOG" >&2; exit 1; }
  sleep 0.5
done
curl -sf "http://127.0.0.1:$PORT/actuator/health/readiness" >/dev/null || { echo "the service is not ready; see $LOG" >&2; exit 1; }
scripts/walkthrough.sh "http://127.0.0.1:$PORT/api/v1" local-dev-token
scripts/walkthrough-alarms.sh "http://127.0.0.1:$PORT/api/v1" local-dev-token

# Then stopped as Ctrl-C stops it (SIGTERM runs the same JVM shutdown hooks as SIGINT, which a script's background
# job may have ignored): it drains and stops with no WARN or ERROR line on the way. The embedded broker stops after
# Camel and the pools, not from a shutdown hook of its own under the running consumers.
FROM=$(( $(wc -l < "$LOG") + 1 ))
STARTED=$(date +%s%N)
kill -TERM $SERVICE
wait $SERVICE || true
trap - EXIT
echo "stopped in $(( ($(date +%s%N) - STARTED) / 1000000 )) ms"
if tail -n +"$FROM" "$LOG" | awk '$2 == "WARN" || $2 == "ERROR" { found = 1; print } END { exit !found }' >&2; then
  echo "stopping logged the WARN or ERROR lines above; see $LOG" >&2
  exit 1
fi
echo "stopped cleanly: no WARN or ERROR line"
