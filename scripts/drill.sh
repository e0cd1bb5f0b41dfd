#!/usr/bin/env bash
#
# scripts/drill.sh — failure drills of lockwatch against the real services on 127.0.0.1, each printing
# PASS or FAIL with its counts. Each is the pipeline benchmark (scripts/bench.sh, whose checks it shares:
# final states equal to a reference computation, every change notified exactly once per linked client after
# de-duplication by webhook-id, every reading and event in ClickHouse once) with one disruption during the run.
#
# Usage:
#   scripts/drill.sh NAME|all [bench options, e.g. --sensors 20000 --duration 90]
#
#   kill              kill -9 the service a third into the run, then start it again
#   rabbitmq-restart  publish as fast as possible for a third of the run, then restart RabbitMQ with the backlog
#                     that leaves (publishing pauses meanwhile), then go on at the set rate
#   postgres-restart  restart PostgreSQL a third into the run
#   clickhouse-stop   stop ClickHouse for 2 minutes a third into the run
#   hanging-client    client 0's endpoint hangs for 5 minutes (retry schedule shortened to 5s,15s,30s,60s x6)
#   failing-client    client 0's endpoint answers 500 for 5 minutes (same schedule)
#   malformed         100,000 bad messages of every kind (127 KB bodies, near the broker's limit, and invalid UTF-8 included) among the readings
#   future-ts         one sensor in a hundred also sends one reading measured 4 minutes ahead: each is parked as
#                     ts_in_future, and the sensors' genuine readings after it still count
#   postgres-read-only  PostgreSQL turns read-only for 30 s a third into the run (a failover): waited out, nothing
#                     parked
#   two-instances     two service instances on the same broker and databases, readings in 4 partitions; 200 more
#                     sensors with a 20 s timeout fall silent: each must be lost once and restored once
#                     (with --partitions 1 the second instance refuses to start, naming the setting)
#   service-instance-loss  two service instances, readings in 4 partitions; the second is killed with -9 a
#                     third into the run and stays down: the survivor must take up every partition (reported: how
#                     long after the kill it owned them all)
#   all               every drill above in turn, then a summary
#
#   HA drills, on the HA topology (scripts/services.sh --ha up, started if down; not in "all"):
#   rabbitmq-node-loss  kill -9 the RabbitMQ node that leads the readings queue a third into the run and delete its
#                     data directory (a lost disk); it stays down. The harness publishes through another node, as a
#                     sensor that stays connected; the service, connected to the lost one, moves to another. Afterwards
#                     scripts/services.sh --ha up brings the node back blank and gives it its replicas again
#   postgres-failover  kill -9 the PostgreSQL primary (server and keeper, as a lost machine) a third into the run;
#                     pg_auto_failover promotes the synchronous standby. The harness and the service are given both
#                     nodes. Afterwards scripts/services.sh --ha up starts the lost node's keeper, which makes it the
#                     new primary's standby
#
# Defaults: --isolated (the benchmark's own vhost and databases), 100,000 sensors, 1,000 clients x 200 links,
# 2,000 readings/s with 5% changes for 60 s. Output: target/bench/drill-<name>.log; exit status 0 when all pass.

set -uo pipefail
cd "$(dirname "$0")/.."

[[ $# -ge 1 ]] || { awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; exit 2; }
name=$1
shift
ALL=(kill rabbitmq-restart postgres-restart postgres-read-only clickhouse-stop hanging-client failing-client malformed future-ts
  two-instances service-instance-loss)
if [[ "$name" == all ]]; then drills=("${ALL[@]}"); else drills=("$name"); fi

mkdir -p target/bench
rc=0
summary=()
for d in "${drills[@]}"; do
  log="target/bench/drill-$d.log"
  echo "[drill] $d (log $log)"
  ha=()
  [[ "$d" == rabbitmq-node-loss || "$d" == postgres-failover ]] && ha=(--ha)
  scripts/bench.sh --isolated --rate 2000 --changes 0.05 --duration 60 --drill "$d" "${ha[@]}" "$@" 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  line=$(grep -E "^DRILL $d: " "$log" | tail -n 1)
  [[ -n "$line" ]] || line="DRILL $d: FAIL (the run did not finish, exit status $status; see $log)"
  ((status == 0)) || rc=1
  summary+=("$line")
done
echo
printf '%s\n' "${summary[@]}"
exit "$rc"
