#!/usr/bin/env bash
# scripts/bench-import.sh [--sensors 100000] [--clients 100] [--external] [--changed] [--devices]
#   — the registry file's import and export.
#
# Makes a CSV of N sensors, each linked to one of C clients (round robin), starts the packaged service with a 512 MB
# heap (the embedded default with throw-away data; --external: the 'external' profile against scripts/services.sh's
# PostgreSQL, whose registry gets the file's sensors and clients until the end, when they are deleted), and times
# with curl:
#   - the first import (every sensor, client and link created), until it is done: a file over
#     import-at-once-max-rows is answered 202 and its import followed at GET /imports/{id};
#   - the same file imported again (nothing to change);
#   - with --changed, the file again with every address changed (every sensor updated);
#   - with --devices, every sensor in one of N/100 gateways and given a credential of its own by the first import
#     (its secret in that import's answer: their number and the answer's size are printed);
#   - the export, which must be the file itself (its rows are the file's, in the same order).
# For each it prints the wall time and the CPU seconds of the service and PostgreSQL; at the end the service's
# largest heap in use (sampled every 0.5 s) and its peak resident memory. It asserts none of the figures; it fails
# only when an answer or the export is wrong.
set -euo pipefail
cd "$(dirname "$0")/.."
SENSORS=100000 CLIENTS=100 PROFILE=embedded CHANGED=false DEVICES=false
while [ $# -gt 0 ]; do
  case "$1" in
    --sensors) SENSORS=$2; shift 2 ;;
    --clients) CLIENTS=$2; shift 2 ;;
    --external) PROFILE=external; shift ;;
    --changed) CHANGED=true; shift ;;
    --devices) DEVICES=true; shift ;;
    *) echo "usage: $0 [--sensors N] [--clients C] [--external] [--changed] [--devices]" >&2; exit 2 ;;
  esac
done
OUT=target/bench-import
mkdir -p "$OUT"
JAR=$(ls target/lockwatch-*.jar 2>/dev/null | grep -v original | head -1 || true)
if [ -z "$JAR" ] || [ -n "$(find src/main pom.xml -newer "$JAR" -print -quit)" ]; then
  echo "[bench-import] building the service jar (mvn -B -q -DskipTests package)"
  mvn -B -q -DskipTests package
  JAR=$(ls target/lockwatch-*.jar | grep -v original | head -1)
fi
PORT=${BENCH_IMPORT_PORT:-18090}
TOKEN=local-dev-token
ARGS=(--server.port="$PORT" --lockwatch.routes.dir="$OUT/routes")
if [ "$PROFILE" = external ]; then
  scripts/services.sh up >/dev/null
  TOKEN=bench-import-token
  ARGS+=(--spring.profiles.active=external --lockwatch.api.tokens="$TOKEN" --lockwatch.notify.allow-private-targets=true
         --lockwatch.secrets.keys="bench:$(head -c 32 /dev/urandom | base64)")
else
  ARGS+=(--lockwatch.embedded.data-dir="$OUT/data" --lockwatch.embedded.ephemeral=true)
fi
RUN=$(date +%s)
FILE="$OUT/registry-$SENSORS.csv"
echo "[bench-import] writing $FILE: $SENSORS sensors, each linked to one of $CLIENTS clients"
registry() { # $1: the street's name
  # the columns an export writes, so that the export of what the file made is the file
  awk -v n="$SENSORS" -v c="$CLIENTS" -v run="$RUN" -v street="$1" -v devices="$DEVICES" 'BEGIN {
    print "sensor_id,address,heartbeat_timeout_seconds,open_alarm_seconds,client_name,client_url,gateways,credential"
    for (i = 1; i <= n; i++) {
      k = i % c
      printf "I%s%08d,\"%s st. %d, fl %d, room %d\",,,Client %s-%03d,http://127.0.0.1:9/hooks/%03d,%s\n", \
        substr(run, length(run) - 5), i, street, i % 300, i % 9 + 1, i % 40 + 1, run, k, k, \
        devices == "true" ? sprintf("gw%s-%06d,live", run, int(i / 100)) : ","
    }
  }'
}
registry Svobody > "$FILE"
CHANGED_FILE="$OUT/registry-$SENSORS-changed.csv"
if [ "$CHANGED" = true ]; then registry Lenina > "$CHANGED_FILE"; fi
echo "[bench-import] $(wc -c < "$FILE") bytes"

java -Xmx512m -XX:+UseParallelGC -jar "$JAR" "${ARGS[@]}" > "$OUT/service.log" 2>&1 &
SERVICE=$!
finish() {
  kill $SERVICE 2>/dev/null; wait $SERVICE 2>/dev/null || true
  if [ "$PROFILE" = external ]; then # the dev registry as it was
    PGPASSWORD=lockwatch psql -q -h 127.0.0.1 -U lockwatch -d lockwatch \
      -c "DELETE FROM sensors WHERE id LIKE 'I${RUN: -6}%'" -c "DELETE FROM clients WHERE name LIKE 'Client ${RUN}-%'" \
      -c "DELETE FROM gateways WHERE id LIKE 'gw${RUN}-%'" \
      && echo "[bench-import] the file's sensors and clients deleted from the dev registry again"
  fi
}
trap finish EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$PORT/actuator/health/readiness" >/dev/null 2>&1 && break
  kill -0 $SERVICE 2>/dev/null || { echo "the service exited; see $OUT/service.log" >&2; exit 1; }
  sleep 0.5
done
# the heap in use and the live data after the last full collection, every 0.5 s, for their largest values at the end
metric() {
  curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/actuator/metrics/$1" \
    | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["measurements"][0]["value"]))' 2>/dev/null || echo 0
}
( while kill -0 $SERVICE 2>/dev/null; do
    echo "$(metric 'jvm.memory.used?tag=area:heap') $(metric jvm.gc.live.data.size)"
    sleep 0.5
  done ) > "$OUT/heap.samples" &
SAMPLER=$!

cpu() { # the CPU seconds so far of a process and its children's threads: utime + stime of /proc/PID/stat
  awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}
pg_cpu() { # every postgres process of the service's database: the embedded one, or the system's
  local total=0 p
  for p in $( { pgrep -x postgres; pgrep -f '^postgres: '; } | sort -u); do
    total=$(awk -v t="$total" -v hz="$(getconf CLK_TCK)" '{ print t + ($14 + $15) / hz }' "/proc/$p/stat" 2>/dev/null || echo "$total")
  done
  echo "$total"
}
import() { # $1: label, $2: file; prints the answer to $OUT/$1.json and the seconds until the import was done
  local s0 p0 t0 t1 ta code id
  s0=$(cpu $SERVICE); p0=$(pg_cpu); t0=$(date +%s%N)
  code=$(curl -s -o "$OUT/$1.answer.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: text/csv' --data-binary "@$2" "http://127.0.0.1:$PORT/api/v1/import")
  ta=$(date +%s%N)
  cp "$OUT/$1.answer.json" "$OUT/$1.json"
  if [ "$code" = 202 ]; then # a job: followed until it has finished
    id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$OUT/$1.json")
    while :; do
      curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/imports/$id" -o "$OUT/$1.json"
      python3 -c 'import json,sys; sys.exit(0 if "finished_at" in json.load(open(sys.argv[1])) else 1)' "$OUT/$1.json" && break
      sleep 0.2
    done
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["state"] == "done" else 1)' "$OUT/$1.json" \
      || { echo "import $id: $(head -c 600 "$OUT/$1.json")" >&2; exit 1; }
  elif [ "$code" != 200 ]; then
    echo "import answered $code: $(head -c 600 "$OUT/$1.json")" >&2; exit 1
  fi
  t1=$(date +%s%N)
  printf '%s: %.2f s (answered %s after %.2f s; service CPU %.1f s, PostgreSQL CPU %.1f s): %s\n' "$1" \
    "$(( (t1 - t0) / 1000000 ))e-3" "$code" "$(( (ta - t0) / 1000000 ))e-3" \
    "$(echo "$(cpu $SERVICE) - $s0" | bc)" "$(echo "$(pg_cpu) - $p0" | bc)" \
    "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d.get("outcome") or {k: d[k] for k in ("sensors", "clients", "links", "gateways", "credentials")}))' "$OUT/$1.json")"
  if [ "$DEVICES" = true ]; then
    printf '%s: %s new credentials in its answer of %s bytes\n' "$1" \
      "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1])).get("new_credentials") or []))' "$OUT/$1.answer.json")" \
      "$(wc -c < "$OUT/$1.answer.json")"
  fi
}
import first-import "$FILE"
import second-import "$FILE"
if [ "$CHANGED" = true ]; then
  import changed-import "$CHANGED_FILE"
  import back-import "$FILE"
fi

T0=$(date +%s%N)
curl -sf -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v1/export?format=csv" -o "$OUT/export.csv"
T1=$(date +%s%N)
printf 'export: %.2f s, %s bytes\n' "$(( (T1 - T0) / 1000000 ))e-3" "$(wc -c < "$OUT/export.csv")"
# the export holds every sensor of the service: the file's rows must be there, as they were, in the same order
if diff <(tr -d '\r' < "$OUT/export.csv" | awk -v p="I${RUN: -6}" 'NR == 1 || index($0, p) == 1') "$FILE" > "$OUT/export.diff"; then
  echo "export: the file's $SENSORS rows came back as they were"
else
  echo "export differs from the file: see $OUT/export.diff" >&2
  exit 1
fi
kill $SAMPLER 2>/dev/null || true
printf 'service memory: heap in use at most %s MB (of -Xmx512m; garbage included), live data after a collection at most %s MB, peak resident %s MB\n' \
  "$(sort -n -k1 "$OUT/heap.samples" | tail -1 | awk '{ printf "%d", $1 / 1048576 }')" \
  "$(sort -n -k2 "$OUT/heap.samples" | tail -1 | awk '{ printf "%d", $2 / 1048576 }')" \
  "$(awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$SERVICE/status")"
