#!/usr/bin/env bash
# The shell blocks of the docs, run as written against a running lockwatch on the embedded default, failing on the
# first error. CI runs it (scripts/walkthrough-ci.sh) against the packaged service.
#
# Which blocks: a ```sh block whose line before is `<!-- runnable -->` (or `<!-- runnable: what it is -->`) in
# README.md, then docs/getting-started.md, then docs/devices.md. Each file's blocks are run in their order in one
# bash (-euo pipefail), so a variable set in one block holds in the next, as in a reader's terminal. Only the
# ports are swapped for the service's, as they may be taken when several run side by side: 8080 (the API's), 1883
# (the MQTT listener's) and 9099 (the webhook receiver's: this script's own, started before the blocks, which a
# reader starts in a terminal of their own). Blocks not marked (the service's own start, the test command, examples
# with placeholders) are not run here: .ci/run runs the test command itself.
#
# A block that reads what an earlier one sent is run once that has happened (before_block, below): a reader typing
# it has waited as long. After each file, what its blocks should have done is checked from outside: the changes the receiver heard and the
# states the API answers. README.md's tour makes client "Front desk" and sensor xa7v9Dfadr7H and closes and opens
# it over HTTP and MQTT; docs/getting-started.md's its own sensor hall1; docs/devices.md's blocks go on from the
# README's (the sensor's credential closes xa7v9Dfadr7H, a gateway's closes b2).
# Exits non-zero, saying which file, which block (its line) and what, if anything is not as the docs say.
#
# Usage: scripts/walkthrough-readme.sh [base-url] [token] [mqtt-port]
set -euo pipefail
BASE=${1:-http://localhost:8080/api/v1}
TOKEN=${2:-local-dev-token}
MQTT_PORT=${3:-1883}
AUTH="Authorization: Bearer $TOKEN"
PORT=${RECEIVER_PORT:-9097}
LOG=$(mktemp)
SENSOR=xa7v9Dfadr7H

fail() { echo "docs walkthrough FAILED: $*" >&2; exit 1; }
cd "$(dirname "$0")/.."
for tool in mosquitto_pub jq; do
  command -v $tool >/dev/null || fail "$tool is not installed (Debian: apt-get install mosquitto-clients jq)"
done
[ "$TOKEN" = local-dev-token ] || fail "the docs' blocks use the embedded default's token, local-dev-token"

. scripts/lib/receiver.sh
start_receiver

# the runnable blocks of file $1 as one script, each after a line that names it, its ports the service's
blocks() {
  awk -v file="$1" '
    /^<!-- runnable(:[^>]*)? -->$/ { marked = NR + 1; title = $0; sub(/^<!-- runnable:? */, "", title); sub(/ *-->$/, "", title); next }
    NR == marked && /^```sh$/ {
      inside = 1
      printf "BLOCK=\"%s, the block at line %d\"\nbefore_block \"%s\"\necho \"--- $BLOCK\"\n", file, NR, title
      next
    }
    inside && /^```$/ { inside = 0; next }
    inside { print }
  ' "$1" | sed -e "s#http://127.0.0.1:8080/api/v1#$BASE#g; s#http://localhost:8080/api/v1#$BASE#g" \
               -e "s#-p 1883 #-p $MQTT_PORT #g" -e "s#127.0.0.1:9099#127.0.0.1:$PORT#g"
}

run_file() {
  local code
  code=$(blocks "$1")
  grep -q '^BLOCK=' <<<"$code" || fail "$1 has no block marked <!-- runnable -->"
  echo "=== the runnable blocks of $1, as run:"
  # a failing command names its block; a newline after each answer, as curl's may end without one
  (bash -euo pipefail -c "$(declare -p BASE AUTH LOG); $(declare -f heard polled until_heard state until_state fail before_block)
trap 'echo \"FAILED: \$BLOCK, at: \$BASH_COMMAND\" >&2' ERR
$code" 2>&1 && echo) | sed 's/^/   > /' || fail "a runnable block of $1 failed (above)"
}

# the states the receiver heard for a sensor, in order: its changes
heard() {
  { grep "\"sensor_id\":\"$1\"" "$LOG" || true; } | grep '"type":"sensor.state_changed"' | grep -o '"state":[0-9]' \
    | cut -d: -f2 | tr -d '\n'
}
state() { curl -sf "$BASE/sensors/$1" -H "$AUTH" | jq -r .state; }
# polls "$1 $2" (a function and its sensor) every 0.2 s, $3 times, until it prints $4; true once it does
polled() {
  for _ in $(seq 1 "$3"); do
    [ "$("$1" "$2")" = "$4" ] && return 0
    sleep 0.2
  done
  return 1
}
until_heard() { polled heard "$1" 100 "$2" || fail "$3: the receiver heard states '$(heard "$1")' of $1, not '$2'"; }
until_state() { polled state "$1" 50 "$2" || fail "$3: $1 is $(state "$1"), not $2"; }

# What a block that reads needs to have happened first: readings are applied in batches through the broker, and
# history is written a second or so later, so a reader who types the next block has it, a script must wait for it.
# Keyed by the block's title (its marker's text); blocks not named need nothing.
before_block() {
  case "$1" in
    "what lockwatch keeps of them")
      until_heard xa7v9Dfadr7H 10 "the README's readings over HTTP"
      for _ in $(seq 1 50); do
        [ "$(curl -sf "$BASE/sensors/xa7v9Dfadr7H/readings" -H "$AUTH" | jq '.items | length')" = 3 ] && return 0
        sleep 0.2
      done
      fail "the README's three readings are not in xa7v9Dfadr7H's history" ;;
    "the counts of a sensor, a client and the service")
      until_heard hall1 101 "docs/getting-started.md's readings"
      for _ in $(seq 1 50); do
        [ "$(curl -sf "$BASE/sensors/hall1/stats" -H "$AUTH" | jq '.items | length')" -gt 0 ] && return 0
        sleep 0.2
      done
      fail "hall1's stats hold no day" ;;
  esac
}

run_file README.md
until_heard $SENSOR 1010 "README.md's tour (closed and open over HTTP, closed and open over MQTT)"
until_state $SENSOR 0 "README.md's tour"

run_file docs/getting-started.md
until_heard hall1 101 "docs/getting-started.md"
until_state hall1 1 "docs/getting-started.md"

run_file docs/devices.md
until_heard $SENSOR 10101 "docs/devices.md (the sensor's own credential closes it)"
until_state b2 1 "docs/devices.md (the gateway's reading)"
curl -sf "$BASE/gateways/hall-3/credentials" -H "$AUTH" | jq -e '.items | length == 1' >/dev/null \
  || fail "docs/devices.md: gateway hall-3 does not hold one credential"
echo "docs walkthrough OK: every runnable block of README.md, docs/getting-started.md and docs/devices.md did what it says"
