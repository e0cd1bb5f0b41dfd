#!/usr/bin/env bash
# The README walkthrough, as a script: against a running lockwatch (by default the embedded default on
# localhost:8080 with the documented local token), register a client pointing at a local webhook receiver,
# register and link a sensor, post readings, and check that the notification arrives and history answers.
# Exits non-zero, saying which step, if anything is not as the README says.
#
# Usage: scripts/walkthrough.sh [base-url] [token]
set -euo pipefail
BASE=${1:-http://localhost:8080/api/v1}
TOKEN=${2:-local-dev-token}
AUTH="Authorization: Bearer $TOKEN"
JSON="Content-Type: application/json"
PORT=${RECEIVER_PORT:-9099}
LOG=$(mktemp)
SENSOR="Walk$(date +%s | tail -c 7)"

fail() { echo "walkthrough FAILED: $*" >&2; exit 1; }
cd "$(dirname "$0")/.."

. scripts/lib/receiver.sh
start_receiver

echo "1. register a client whose URL is the local receiver"
CLIENT=$(curl -sf -X POST "$BASE/clients" -H "$AUTH" -H "$JSON" \
  -d "{\"name\": \"Front desk\", \"url\": \"http://127.0.0.1:$PORT/hook\"}") || fail "POST /clients"
CLIENT_ID=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' <<<"$CLIENT")
echo "   client $CLIENT_ID (its webhook_secret is in this answer only)"

echo "2. register sensor $SENSOR and link it to the client"
curl -sf -X POST "$BASE/sensors" -H "$AUTH" -H "$JSON" \
  -d "{\"id\": \"$SENSOR\", \"address\": \"Moscow, Russia, Svobody st. 23 fl 1 room 16\"}" >/dev/null || fail "POST /sensors"
curl -sf -X PUT "$BASE/clients/$CLIENT_ID/sensors/$SENSOR" -H "$AUTH" >/dev/null || fail "PUT link"

echo "3. post readings: closed, closed again (a repeat), open"
curl -sf -X POST "$BASE/readings" -H "$AUTH" -H "$JSON" \
  -d "[{\"sensor_id\": \"$SENSOR\", \"data\": 1}]" >/dev/null || fail "POST /readings"
curl -sf -X POST "$BASE/readings" -H "$AUTH" -H "$JSON" \
  -d "[{\"sensor_id\": \"$SENSOR\", \"data\": 1}, {\"sensor_id\": \"$SENSOR\", \"data\": 0}]" >/dev/null || fail "POST /readings"

echo "4. the notifications arrive at the receiver"
for _ in $(seq 1 50); do
  grep -q "\"sequence\":2" "$LOG" 2>/dev/null && break
  sleep 0.2
done
grep -q "\"sequence\":2" "$LOG" || fail "no notification of the second change arrived"
# both changes, each once, in order: a healthy endpoint hears every event
SEQUENCES=$(grep "\"sensor_id\":\"$SENSOR\"" "$LOG" | grep -o '"sequence":[0-9]*' | tr '\n' ' ')
[ "$SEQUENCES" = '"sequence":1 "sequence":2 ' ] || fail "the receiver got sequences $SEQUENCES, not 1 then 2"
grep "\"sensor_id\":\"$SENSOR\"" "$LOG" | sed 's/^/   /'

echo "5. state and history answer"
curl -sf "$BASE/sensors/$SENSOR" -H "$AUTH" | grep -q '"state":0' || fail "GET /sensors/$SENSOR: state is not 0"
for _ in $(seq 1 25); do
  N=$(curl -sf "$BASE/sensors/$SENSOR/readings" -H "$AUTH" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')
  [ "$N" = 3 ] && break
  sleep 0.2
done
[ "$N" = 3 ] || fail "GET /sensors/$SENSOR/readings: $N readings, not 3"
curl -sf "$BASE/sensors/$SENSOR/events" -H "$AUTH" | python3 -c 'import json,sys; [print("  ", e["sequence"], e["type"], e["previous_state"], "->", e["state"]) for e in json.load(sys.stdin)["items"]]'
echo "walkthrough OK"
