#!/usr/bin/env bash
# A Zigbee2MQTT door sensor as it is, checked from outside (issue 57): Mosquitto stands in for Zigbee2MQTT's broker
# (scripts/services.sh up mosquitto: 127.0.0.1:1884, user zigbee2mqtt), the packaged service on the embedded default
# subscribes to it with the adapter turned on, a sensor is registered with the zigbee2mqtt profile and its friendly
# name, and mosquitto_pub publishes what Zigbee2MQTT would: {"contact": false, "battery": 9}. The door is then open,
# a webhook says so, and the battery-low alarm is raised. Exits non-zero, saying which step, if anything is not so.
#
# Usage: scripts/walkthrough-devices.sh   (as root: it starts Mosquitto; needs the packaged jar, mvn package)
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=$(ls target/lockwatch-*.jar 2>/dev/null | grep -v original | head -1 || true)
[ -n "$JAR" ] || { echo "no packaged jar: run mvn package first" >&2; exit 1; }
API_PORT=${WALKTHROUGH_DEVICES_PORT:-18081}
BASE="http://127.0.0.1:$API_PORT/api/v1"
AUTH="Authorization: Bearer local-dev-token"
JSON="Content-Type: application/json"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORT=${RECEIVER_PORT:-$(free_port)}
LOG=$(mktemp)
SERVICE_LOG=target/walkthrough-devices-service.log
RUN=$(date +%s | tail -c 7)
SENSOR="Front$RUN" DEVICE="hall/front_door_$RUN"

fail() { echo "devices walkthrough FAILED: $*" >&2; exit 1; }
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval("d" + sys.argv[1]))' "$1"; }

echo "1. Mosquitto as Zigbee2MQTT's broker, and the service subscribed to it"
scripts/services.sh up mosquitto
. scripts/lib/receiver.sh
start_receiver
java -jar "$JAR" --server.port="$API_PORT" --lockwatch.embedded.data-dir="target/walkthrough-devices-data" \
  --lockwatch.embedded.ephemeral=true --lockwatch.embedded.mqtt-port=0 \
  --lockwatch.adapters.zigbee2mqtt.enabled=true --lockwatch.adapters.zigbee2mqtt.broker-url=tcp://127.0.0.1:1884 \
  --lockwatch.adapters.zigbee2mqtt.username=zigbee2mqtt --lockwatch.adapters.zigbee2mqtt.password=zigbee2mqtt \
  > "$SERVICE_LOG" 2>&1 &
SERVICE=$!
trap 'kill $RECEIVER $SERVICE 2>/dev/null; wait $SERVICE 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 $(( ${WALKTHROUGH_START_SECONDS:-300} * 2 ))); do
  curl -sf "http://127.0.0.1:$API_PORT/actuator/health/readiness" >/dev/null 2>&1 && break
  kill -0 $SERVICE 2>/dev/null || { tail -20 "$SERVICE_LOG" >&2; fail "the service exited; see $SERVICE_LOG"; }
  sleep 0.5
done
curl -sf "http://127.0.0.1:$API_PORT/actuator/health/readiness" >/dev/null || fail "the service is not ready; see $SERVICE_LOG"
for _ in $(seq 1 100); do
  grep -q "this instance takes its broker.s messages" "$SERVICE_LOG" && break
  sleep 0.2
done
grep -q "this instance takes its broker.s messages" "$SERVICE_LOG" || fail "the adapter did not start; see $SERVICE_LOG"

echo "2. a sensor registered with the Zigbee2MQTT profile, as friendly name $DEVICE, and a client of it"
CLIENT=$(curl -sf -X POST "$BASE/clients" -H "$AUTH" -H "$JSON" \
  -d "{\"name\": \"Hall $RUN\", \"url\": \"http://127.0.0.1:$PORT/hall\"}" | field '["id"]') || fail "POST /clients"
curl -sf -X POST "$BASE/sensors" -H "$AUTH" -H "$JSON" -d "{\"id\": \"$SENSOR\", \"address\": \"Svobody st. 23, hall\",
  \"profile\": \"zigbee2mqtt\", \"device_id\": \"$DEVICE\"}" >/dev/null || fail "POST /sensors"
curl -sf -X PUT "$BASE/clients/$CLIENT/sensors/$SENSOR" -H "$AUTH" >/dev/null || fail "PUT link"

echo "3. Zigbee2MQTT's message of the door opened, its battery at 9 %"
mosquitto_pub -h 127.0.0.1 -p 1884 -u zigbee2mqtt -P zigbee2mqtt -q 1 -t "zigbee2mqtt/$DEVICE" \
  -m '{"contact": false, "battery": 9, "linkquality": 120}' || fail "mosquitto_pub"

echo "4. the door is open, a webhook says so, and the battery-low alarm is raised"
for _ in $(seq 1 100); do
  grep -q '"type":"sensor.battery_low"' "$LOG" && break
  sleep 0.2
done
grep '"type":"sensor.state_changed"' "$LOG" | grep -q '"state":0' || fail "no webhook of the door opened within 20 s"
grep -q '"type":"sensor.battery_low"' "$LOG" || fail "no battery_low webhook within 20 s"
STATE=$(curl -sf "$BASE/sensors/$SENSOR" -H "$AUTH" | field '["state"]')
[ "$STATE" = 0 ] || fail "the sensor's state is $STATE, not 0"
TYPE=$(curl -sf "$BASE/alarms?active=true&sensor_id=$SENSOR" -H "$AUTH" | field '["items"][0]["type"]')
[ "$TYPE" = battery_low ] || fail "its active alarm is $TYPE, not battery_low"
sed 's/^/   /' "$LOG"
echo "devices walkthrough passed"
