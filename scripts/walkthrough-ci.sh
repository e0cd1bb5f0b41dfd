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
