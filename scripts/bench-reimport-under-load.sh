#!/usr/bin/env bash
# scripts/bench-reimport-under-load.sh [scripts/bench.sh options] — notification latency while the whole registry is
# imported again with every address changed.
#
# Runs scripts/bench.sh --isolated with the options given (e.g. --rate 2000 --changes 0.05). While its service warms
# up, exports the registry from that service (GET /export: every sensor with its two clients) and writes the same
# file with every address changed. When the timed run starts, posts it (POST /import: more than 100,000 rows, so a
# 202 and a job) and follows the import until it is done, printing how long it took against the run's start. The
# run's notification latency (bench.sh's own figures) then covers the import: compare it with a run without this.
# Asserts nothing of the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bench.sh
OUT=target/bench-reimport
bench_beside "$OUT" "$@"
bench_beside_reached "warming the service up"
API="$(bench_beside_service)/api/v1"
AUTH="Authorization: Bearer bench-token"
T0=$(date +%s%N)
curl -sf -H "$AUTH" "$API/export?format=csv" -o "$OUT/registry.csv"
echo "[reimport] exported $(($(wc -l < "$OUT/registry.csv") - 1)) rows in $(( ($(date +%s%N) - T0) / 1000000 )) ms"
# every address changed; the rows, their sensors and their clients as they are
python3 - "$OUT/registry.csv" "$OUT/changed.csv" <<'PY'
import csv, sys
with open(sys.argv[1], newline='') as f, open(sys.argv[2], 'w', newline='') as out:
    rows = csv.reader(f)
    w = csv.writer(out, lineterminator='\n')
    w.writerow(next(rows))
    for i, row in enumerate(rows):
        row[1] = 'Moved, Lenina st. ' + row[0]
        w.writerow(row)
PY

bench_beside_reached "service run: publishing"
sleep 10 # into the run's steady part
T0=$(date +%s%N)
CODE=$(curl -s -o "$OUT/import.json" -w '%{http_code}' -X POST -H "$AUTH" -H 'Content-Type: text/csv' \
  --data-binary "@$OUT/changed.csv" "$API/import")
TA=$(date +%s%N)
echo "[reimport] import answered $CODE after $(( (TA - T0) / 1000000 )) ms"
if [ "$CODE" = 202 ]; then
  ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$OUT/import.json")
  until curl -sf -H "$AUTH" "$API/imports/$ID" -o "$OUT/import.json" \
      && python3 -c 'import json,sys; sys.exit(0 if "finished_at" in json.load(open(sys.argv[1])) else 1)' "$OUT/import.json"; do
    sleep 0.2
  done
fi
echo "[reimport] import finished $(( ($(date +%s%N) - T0) / 1000000 )) ms after it was posted: $(head -c 400 "$OUT/import.json")"
wait $BESIDE_PID
