#!/usr/bin/env bash
# The README's MQTT and device-identity examples, run as written against a running lockwatch on the embedded default:
# each block marked `<!-- walkthrough: <name> ... -->` just before its ```sh fence is taken from README.md and run
# with bash -e, only its ports swapped for the service's (8080 for the API's, 1883 for the MQTT listener's, as these
# may be taken when several run side by side). Before them, the README walkthrough's client and sensor are made
# (a receiver for the client, sensor xa7v9Dfadr7H linked to it, open); after each, what it should have done is
# checked from outside: the changes the receiver heard and the states the API answers.
# Exits non-zero, saying which block and what, if anything is not as the README says.
#
# Usage: scripts/walkthrough-readme.sh [base-url] [token] [mqtt-port]
set -euo pipefail
BASE=${1:-http://localhost:8080/api/v1}
TOKEN=${2:-local-dev-token}
MQTT_PORT=${3:-1883}
AUTH="Authorization: Bearer $TOKEN"
JSON="Content-Type: application/json"
PORT=${RECEIVER_PORT:-9097}
LOG=$(mktemp)
SENSOR=xa7v9Dfadr7H

fail() { echo "README walkthrough FAILED: $*" >&2; exit 1; }
cd "$(dirname "$0")/.."
for tool in mosquitto_pub jq; do
  command -v $tool >/dev/null || fail "$tool is not installed (Debian: apt-get install mosquitto-clients jq)"
done

. scripts/lib/receiver.sh
start_receiver

# the README's block called $1, its ports the service's
block() {
  awk -v name="$1" '
    $0 ~ "^<!-- walkthrough: " name "[ -]" { marked = 1; next }
    marked && /^```sh$/ { inside = 1; next }
    inside && /^```$/ { exit }
    inside { print }
  ' README.md | sed -e "s#http://127.0.0.1:8080/api/v1#$BASE#g; s#http://localhost:8080/api/v1#$BASE#g" \
                    -e "s#-p 1883 #-p $MQTT_PORT #g"
}

run_block() {
  local code
  code=$(block "$1")
  [ -n "$code" ] || fail "README.md has no block marked <!-- walkthrough: $1 -->"
  echo "--- README block '$1', as run:"
  sed 's/^/   | /' <<<"$code"
  # a newline after the block's output, whose last answer (curl's) may end without one
  (bash -euo pipefail -c "$code" 2>&1 && echo) | sed 's/^/   > /' || fail "the README block '$1' failed"
}

# the states the receiver heard for a sensor, in order: its changes
heard() {
  grep "\"sensor_id\":\"$1\"" "$LOG" | grep '"type":"sensor.state_changed"' | grep -o '"state":[0-9]' | cut -d: -f2 | tr -d '\n'
}
until_heard() {
  for _ in $(seq 1 100); do
    [ "$(heard "$1")" = "$2" ] && return 0
    sleep 0.2
  done
  fail "$3: the receiver heard states '$(heard "$1")' of $1, not '$2'"
}
state() { curl -sf "$BASE/sensors/$1" -H "$AUTH" | jq -r .state; }

echo "1. the walkthrough's client and sensor $SENSOR, open"
CLIENT_ID=$(curl -sf -X POST "$BASE/clients" -H "$AUTH" -H "$JSON" \
  -d "{\"name\": \"Front desk\", \"url\": \"http://127.0.0.1:$PORT/hook\"}" | jq -r .id) || fail "POST /clients"
curl -sf -X POST "$BASE/sensors" -H "$AUTH" -H "$JSON" \
  -d "{\"id\": \"$SENSOR\", \"address\": \"Moscow, Russia, Svobody st. 23 fl 1 room 16\"}" >/dev/null || fail "POST /sensors"
curl -sf -X PUT "$BASE/clients/$CLIENT_ID/sensors/$SENSOR" -H "$AUTH" >/dev/null || fail "PUT link"
curl -sf -X POST "$BASE/readings" -H "$AUTH" -H "$JSON" -d "{\"sensor_id\": \"$SENSOR\", \"data\": 0}" >/dev/null \
  || fail "POST /readings"
until_heard $SENSOR 0 "the open over HTTP"

echo "2. Readings over MQTT: closed, then open again, each a change heard"
run_block mqtt
until_heard $SENSOR 010 "the MQTT block"
[ "$(state $SENSOR)" = 0 ] || fail "the MQTT block: $SENSOR is $(state $SENSOR), not 0"

echo "3. Device identity: the sensor's own credential closes it over MQTT; a gateway's reports b2 over HTTP"
run_block device-identity
until_heard $SENSOR 0101 "the device-identity block"
[ "$(state $SENSOR)" = 1 ] || fail "the device-identity block: $SENSOR is $(state $SENSOR), not 1"
for _ in $(seq 1 50); do
  [ "$(state b2)" = 1 ] && break
  sleep 0.2
done
[ "$(state b2)" = 1 ] || fail "the device-identity block: b2 is $(state b2), not 1 (the gateway's reading)"
curl -sf "$BASE/gateways/hall-3/credentials" -H "$AUTH" | jq -e '.items | length == 1' >/dev/null \
  || fail "the device-identity block: hall-3 does not hold one credential"
echo "README walkthrough OK: the MQTT and device-identity examples did what the README says"
