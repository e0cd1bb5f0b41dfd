#!/usr/bin/env bash
# scripts/bench-retention.sh [--old N] [scripts/bench.sh options] — notification latency while retention removes N
# old notifications (10,000,000 by default).
#
# Runs scripts/bench.sh --isolated with the options given (e.g. --rate 2000 --changes 0.05 --duration 180), its
# service passing over retention every 15 s. While the service warms up, writes N notifications that finished 40
# days ago (past the 30 days of lockwatch.notify.retention; one old event for each 1,000 of them, one per client:
# bench.sh registers 1,000 clients) into the benchmark's
# database in one statement, and prints the table's size. From the timed run's start it prints, every 5 s, how many
# old ones are left, until none is; then the table's size again. bench.sh's own figures (notification latency by
# stage) cover the removal: compare them with a run without it. Asserts nothing of the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=10000000
if [ "${1:-}" = --old ]; then OLD=$2; shift 2; fi
OUT=target/bench-retention
mkdir -p "$OUT"
LOG="$OUT/bench.log"
: > "$LOG"
sql() { PGPASSWORD=lockwatch psql -X -q -At -h 127.0.0.1 -U lockwatch -d lockwatch_bench -c "$1"; }
scripts/bench.sh --isolated --service-arg --lockwatch.retention.interval=15000 "$@" > >(tee "$LOG") 2>&1 &
BENCH=$!
trap 'kill $BENCH 2>/dev/null || true' INT TERM
wait_for() { # $1: a line bench.sh prints
  until grep -q "$1" "$LOG"; do
    kill -0 $BENCH 2>/dev/null || { echo "[retention] bench.sh ended before: $1" >&2; exit 1; }
    sleep 0.5
  done
}
size() { sql "SELECT pg_size_pretty(pg_total_relation_size('notifications'))"; }

wait_for "warming the service up"
T0=$(date +%s%N)
sql "
  WITH events AS (
    INSERT INTO sensor_events (sensor_id, sequence, type, state, previous_state, occurred_at, recorded_at)
    SELECT (SELECT id FROM sensors ORDER BY id LIMIT 1), -i, 'sensor.state_changed', 0, 1,
           now() - interval '40 days', now() - interval '40 days'
      FROM generate_series(1, ceil($OLD / 1000.0)::int) i
    RETURNING id, sensor_id, sequence)
  INSERT INTO notifications (event_id, client_id, sensor_id, type, sequence, status, attempts, next_attempt_at,
                             created_at, finished_at)
  SELECT e.id, c.id, e.sensor_id, 'sensor.state_changed', e.sequence, 'delivered', 1,
         now() - interval '40 days', now() - interval '40 days', now() - interval '40 days'
    FROM events e CROSS JOIN (SELECT id FROM clients ORDER BY id LIMIT 1000) c
   LIMIT $OLD"
echo "[retention] $OLD old notifications written in $(( ($(date +%s%N) - T0) / 1000000 )) ms; notifications: $(size)"
OLD_LEFT="SELECT count(*) FROM notifications WHERE finished_at < now() - interval '30 days'"
wait_for "service run: publishing"
T0=$(date +%s%N)
while :; do
  LEFT=$(sql "$OLD_LEFT")
  echo "[retention] +$(( ($(date +%s%N) - T0) / 1000000000 )) s: $LEFT old notifications left"
  [ "$LEFT" = 0 ] && break
  kill -0 $BENCH 2>/dev/null || break
  sleep 5
done
echo "[retention] notifications after the removal: $(size)"
wait $BENCH
