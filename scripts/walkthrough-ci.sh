#!/usr/bin/env bash
# Runs the walkthroughs against the packaged service on the embedded default (fresh, throw-away data), as CI does
# after the unit tests: starts it, waits for readiness, runs scripts/walkthrough.sh, scripts/walkthrough-alarms.sh
# and every block marked runnable in README.md, docs/getting-started.md and docs/devices.md
# (scripts/walkthrough-readme.sh), stops it.
#
# Ports: the API on WALKTHROUGH_PORT (18080); the MQTT listener on its default, 1883, checked to be taken when it
# is free (WALKTHROUGH_MQTT_PORT chooses another); each webhook receiver on a free port unless RECEIVER_PORT says
# which; so that several can run side by side.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=$(ls target/lockwatch-*.jar | grep -v original | head -1)
[ -n "$JAR" ] || { echo "no packaged jar: run mvn verify first" >&2; exit 1; }
PORT=${WALKTHROUGH_PORT:-18080}
LOG=target/walkthrough-service.log

# the docs' examples publish with mosquitto_pub and read answers with jq (Debian's packages, as .ci/run's chromium)
if ! command -v mosquitto_pub >/dev/null || ! command -v jq >/dev/null; then
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q mosquitto-clients jq >/dev/null
fi
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
MQTT_ARGS=()
if [ -n "${WALKTHROUGH_MQTT_PORT:-}" ]; then
  MQTT_ARGS=(--lockwatch.embedded.mqtt-port="$WALKTHROUGH_MQTT_PORT")
  EXPECT_MQTT=$WALKTHROUGH_MQTT_PORT
elif taken 1883; then
  EXPECT_MQTT=""   # another process holds it: the listener says where it went instead
else
  EXPECT_MQTT=1883
fi
java -jar "$JAR" --server.port="$PORT" --lockwatch.embedded.data-dir=target/walkthrough-data "${MQTT_ARGS[@]}" \
  --lockwatch.embedded.ephemeral=true --lockwatch.routes.dir=target/walkthrough-routes > "$LOG" 2>&1 &
SERVICE=$!
trap 'kill $SERVICE 2>/dev/null; wait $SERVICE 2>/dev/null || true' EXIT
# up to WALKTHROUGH_START_SECONDS (300): a start takes seconds, minutes on a machine shared by many
for _ in $(seq 1 $(( ${WALKTHROUGH_START_SECONDS:-300} * 2 ))); do
  curl -sf "http://127.0.0.1:$PORT/actuator/health/readiness" >/dev/null 2>&1 && break
  kill -0 $SERVICE 2>/dev/null || { echo "the service exited; see $LOG" >&2; tail -20 "$LOG" >&2; exit 1; }
  sleep 0.5
done
curl -sf "http://127.0.0.1:$PORT/actuator/health/readiness" >/dev/null || { echo "the service is not ready; see $LOG" >&2; exit 1; }
MQTT_PORT=$(sed -n 's#.*Embedded MQTT 3.1.1 listener (Moquette) on tcp://127.0.0.1:\([0-9]*\).*#\1#p' "$LOG" | head -1)
[ -n "$MQTT_PORT" ] || { echo "the service logged no MQTT listener; see $LOG" >&2; exit 1; }
if [ -n "$EXPECT_MQTT" ] && [ "$MQTT_PORT" != "$EXPECT_MQTT" ]; then
  echo "the MQTT listener is on $MQTT_PORT, not on $EXPECT_MQTT, which was free; see $LOG" >&2
  exit 1
fi
echo "the MQTT listener is on $MQTT_PORT"
RECEIVER_PORT=${RECEIVER_PORT:-$(free_port)} scripts/walkthrough.sh "http://127.0.0.1:$PORT/api/v1" local-dev-token
RECEIVER_PORT=${RECEIVER_PORT:-$(free_port)} scripts/walkthrough-alarms.sh "http://127.0.0.1:$PORT/api/v1" local-dev-token
RECEIVER_PORT=${RECEIVER_PORT:-$(free_port)} scripts/walkthrough-readme.sh "http://127.0.0.1:$PORT/api/v1" local-dev-token "$MQTT_PORT"

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
