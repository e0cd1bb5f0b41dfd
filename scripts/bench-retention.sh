#!/usr/bin/env bash
# scripts/bench-retention.sh [--old N] [scripts/bench.sh options] — notification latency while retention removes N
# old notifications (10,000,000 by default).
#
# Runs scripts/bench.sh --isolated with the options given (e.g. --rate 2000 --changes 0.05 --duration 180). Once its
# service is up, stops the retention route (Jolokia, as Hawtio would); once its sensors are registered, writes N
# notifications that finished 40 days ago (past the 30 days of lockwatch.notify.retention), for 1,000 clients of
# its own and one event of 100 days ago (past the 90 days of history) for each 1,000, into the benchmark's database
# in one statement, and prints the table's size. bench.sh holds meanwhile (--hold-after-setup), before its raw
# ceiling: writing 10,000,000 rows under load took over 13 minutes and overlapped the timed run. When the timed run
# starts, starts the retention route again (a pass every 20 s), which removes them; prints
# every 5 s how many are left, until none is; then the table's size again. bench.sh's own figures (notification
# latency by stage) cover the removal: compare them with a run without it. Asserts nothing of the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=10000000
if [ "${1:-}" = --old ]; then OLD=$2; shift 2; fi
source scripts/lib/bench.sh
OUT=target/bench-retention
sql() { PGPASSWORD=lockwatch psql -X -q -At -h 127.0.0.1 -U lockwatch -d lockwatch_bench -c "$1"; }
# a pass every 20 s: a route started again keeps its clustered trigger's schedule, so its first pass comes within that
mkdir -p "$OUT"
rm -f "$OUT/old-written"
bench_beside "$OUT" --hold-after-setup "$PWD/$OUT/old-written" --service-arg --lockwatch.retention.interval=20000 "$@"
size() { sql "SELECT pg_size_pretty(pg_total_relation_size('notifications'))"; }

route() { # $1: start or stop the retention route, over Jolokia with the bench's token, as Hawtio would
  python3 -c 'import json,sys; print(json.dumps({"type": "exec", "operation": sys.argv[1] + "()",
    "mbean": "org.apache.camel:context=lockwatch,type=routes,name=\"old-history-and-notifications-are-removed\""}))' "$1" \
    > "$OUT/jolokia.json"
  curl -sf -u "bench:bench-token" -H 'Content-Type: application/json' --data-binary "@$OUT/jolokia.json" \
    "$BASE/actuator/jolokia" | grep -q '"status":200' || { echo "[retention] the route did not $1" >&2; exit 1; }
  echo "[retention] retention route: $1"
}
bench_beside_reached "service healthy"
BASE=$(bench_beside_service)
route stop
bench_beside_reached "holding until"
T0=$(date +%s%N)
sql "
  WITH clients AS (
    INSERT INTO clients (name, url, webhook_secret)
    SELECT 'Retention bench ' || i, 'http://127.0.0.1:9/old', 'whsec_AAAA' FROM generate_series(1, 1000) i
    RETURNING id),
  events AS (
    INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at, recorded_at)
    SELECT (SELECT id FROM sensors ORDER BY id LIMIT 1), -i, 'sensor.state_changed', 0, 1,
           now() - interval '100 days', now() - interval '100 days'
      FROM generate_series(1, ceil($OLD / 1000.0)::int) i
    RETURNING id, sensor_id, sequence)
  INSERT INTO notifications (event_id, client_id, sensor_id, type, sequence, status, attempts, next_attempt_at,
                             created_at, finished_at)
  SELECT e.id, c.id, e.sensor_id, 'sensor.state_changed', e.sequence, 'delivered', 1,
         now() - interval '40 days', now() - interval '40 days', now() - interval '40 days'
    FROM events e CROSS JOIN clients c
   LIMIT $OLD"
echo "[retention] $OLD old notifications written in $(( ($(date +%s%N) - T0) / 1000000 )) ms; notifications: $(size)"
touch "$OUT/old-written"
OLD_LEFT="SELECT count(*) FROM notifications WHERE finished_at < now() - interval '30 days'"
bench_beside_reached "service run: publishing"
sleep 10 # into the run's steady part
route start
T0=$(date +%s%N)
while :; do
  LEFT=$(sql "$OLD_LEFT")
  echo "[retention] +$(( ($(date +%s%N) - T0) / 1000000000 )) s: $LEFT old notifications left"
  # their events (100 days old, past the 90 days of history) go in the pass after: bench.sh counts the events
  [ "$LEFT" = 0 ] && [ "$(sql "SELECT count(*) FROM sensor_events WHERE sequence < 0")" = 0 ] && break
  kill -0 $BESIDE_PID 2>/dev/null || break
  sleep 5
done
echo "[retention] notifications after the removal: $(size)"
sql "DELETE FROM clients WHERE name LIKE 'Retention bench %'" # bench.sh's next TRUNCATE would take them anyway
wait $BESIDE_PID
