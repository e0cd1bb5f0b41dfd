# shellcheck shell=bash
# The HA topology of scripts/services.sh --ha, on this one machine, beside the single-node services (other ports,
# directories and node names, so that both can run in the same sitting):
#   rabbitmq   a cluster of three RabbitMQ nodes lwha1..3@localhost, one Erlang cookie (the rabbitmq user's),
#              formed by classic peer discovery on first boot; quorum queues replicate over all three.
#              amqp://guest:guest@127.0.0.1:5681,5682,5683  (spring.rabbitmq.addresses takes the list)
#              management 15681..15683, distribution 25681..25683. No MQTT here: in 3.10 the MQTT plugin keeps a Raft
#              cluster of its own that held every node's boot for 100 s after a whole-cluster restart; nothing that
#              runs on this topology speaks MQTT, which is tested against the single node.
#              config /etc/rabbitmq/ha/, data /var/lib/rabbitmq/ha/<node>/, logs /var/log/rabbitmq/ha/
#   postgres   PostgreSQL 15 as a primary and a synchronous standby under pg_auto_failover 2.0: its monitor on 5440,
#              the data nodes node1 and node2 on 5441 and 5442, each run by its keeper (pg_autoctl run), which
#              promotes the standby when the primary is lost. synchronous_commit = on, synchronous_standby_names
#              set by pg_auto_failover (ANY 1 of the standby): a commit returns once the standby has the WAL on disk.
#              jdbc:postgresql://127.0.0.1:5441,127.0.0.1:5442/lockwatch?targetServerType=primary
#              user lockwatch, password lockwatch; loopback connections are trusted (a test topology)
#              data /var/lib/postgresql/ha/<node>/, logs /var/log/postgresql/ha/<node>.log
# Sourced by scripts/services.sh, whose helpers it uses.

readonly HA_RMQ_NODES=(lwha1 lwha2 lwha3)
readonly HA_RMQ_ETC=/etc/rabbitmq/ha
readonly HA_RMQ_DATA=/var/lib/rabbitmq/ha
readonly HA_RMQ_LOG_DIR=/var/log/rabbitmq/ha

ha_rmq_node() { printf '%s@localhost' "${HA_RMQ_NODES[$1]}"; }
ha_rmq_port() { printf '%s' $((5681 + $1)); }
ha_rmq_mgmt_port() { printf '%s' $((15681 + $1)); }
ha_rmq_dist_port() { printf '%s' $((25681 + $1)); }
ha_rmq_mqtt_port() { printf '%s' $((1891 + $1)); }
ha_rmq_pid_file() { printf '%s/%s.pid' "$HA_RMQ_DATA" "$(ha_rmq_node "$1")"; }
ha_rmq_dir() { printf '%s/%s' "$HA_RMQ_DATA" "$(ha_rmq_node "$1")"; }
ha_rmq_addresses() { printf '127.0.0.1:5681,127.0.0.1:5682,127.0.0.1:5683'; }

ha_rmq_configure() {
  local i
  install -d -o rabbitmq -g rabbitmq "$HA_RMQ_ETC" "$HA_RMQ_DATA" "$HA_RMQ_LOG_DIR"
  write_if_changed "${HA_RMQ_ETC}/rabbitmq-env.conf" rabbitmq:rabbitmq <<EOF || true
# Managed by lockwatch scripts/services.sh --ha: the nodes' names, ports and directories are given to each on start.
ulimit -S -n "\$(ulimit -H -n)" 2>/dev/null || true
EOF
  write_if_changed "${HA_RMQ_ETC}/enabled_plugins" rabbitmq:rabbitmq <<EOF || true
[rabbitmq_auth_backend_cache,rabbitmq_auth_backend_http,rabbitmq_consistent_hash_exchange,rabbitmq_management].
EOF
  for i in 0 1 2; do
    write_if_changed "${HA_RMQ_ETC}/$(ha_rmq_node "$i").conf" rabbitmq:rabbitmq < <(
      rabbitmq_conf "$(ha_rmq_port "$i")" "$(ha_rmq_mgmt_port "$i")" "$(ha_rmq_dist_port "$i")" "$(ha_rmq_mqtt_port "$i")"
      cat <<EOF
# The HA cluster: the three nodes find each other by name on first boot; a node that lost its disk joins again
# once the others have forgotten it (services.sh --ha up does that).
cluster_formation.peer_discovery_backend = classic_config
cluster_formation.classic_config.nodes.1 = $(ha_rmq_node 0)
cluster_formation.classic_config.nodes.2 = $(ha_rmq_node 1)
cluster_formation.classic_config.nodes.3 = $(ha_rmq_node 2)
# A node cut off from the majority pauses rather than serve a split brain (quorum queues are safe either way).
cluster_partition_handling = pause_minority
EOF
    ) || true
  done
}

ha_rmq_pid() { rabbit_node_pid "$(ha_rmq_node "$1")" "$(ha_rmq_pid_file "$1")"; }
ha_rmq_running() { pid_alive "$(ha_rmq_pid "$1")"; }
ha_rmq_ctl() { local i=$1; shift; rabbitmqctl -n "$(ha_rmq_node "$i")" "$@"; }

ha_rmq_probe() {
  ha_rmq_running "$1" || return 2
  timeout 60 rabbitmqctl -n "$(ha_rmq_node "$1")" -q await_startup >/dev/null 2>&1 && port_listening "$(ha_rmq_port "$1")"
}

# Another node of the cluster that is running, or nothing
ha_rmq_running_peer() {
  local i=$1 j
  for j in 0 1 2; do
    if ((j != i)) && ha_rmq_running "$j"; then printf '%s' "$j"; return 0; fi
  done
  return 1
}

ha_rmq_start() {
  local i=$1 node peer
  node=$(ha_rmq_node "$i")
  if [[ ! -d "$(ha_rmq_dir "$i")" ]] && peer=$(ha_rmq_running_peer "$i") &&
    ha_rmq_ctl "$peer" -q cluster_status --formatter json 2>/dev/null | grep -q "\"$node\""; then
    # its disk is gone (a drill deletes it, as a lost machine would): the cluster forgets the old member first,
    # so that the blank node may join it again
    log "rabbitmq-ha: ${node} lost its data; the cluster forgets it before it joins again"
    ha_rmq_ctl "$peer" -q forget_cluster_node "$node" || die "rabbitmq-ha: forget_cluster_node ${node} failed"
  fi
  log "rabbitmq-ha: starting ${node} (AMQP 127.0.0.1:$(ha_rmq_port "$i"))"
  rm -f "$(ha_rmq_pid_file "$i")"
  if ! su rabbitmq -s /bin/sh -c "cd /var/lib/rabbitmq && exec env \
      RABBITMQ_NODENAME=${node} \
      RABBITMQ_NODE_PORT=$(ha_rmq_port "$i") \
      RABBITMQ_DIST_PORT=$(ha_rmq_dist_port "$i") \
      RABBITMQ_CONFIG_FILE=${HA_RMQ_ETC}/${node}.conf \
      RABBITMQ_CONF_ENV_FILE=${HA_RMQ_ETC}/rabbitmq-env.conf \
      RABBITMQ_ENABLED_PLUGINS_FILE=${HA_RMQ_ETC}/enabled_plugins \
      RABBITMQ_MNESIA_BASE=${HA_RMQ_DATA} \
      RABBITMQ_PID_FILE=$(ha_rmq_pid_file "$i") \
      RABBITMQ_LOG_BASE=${HA_RMQ_LOG_DIR} \
      ERL_EPMD_ADDRESS=127.0.0.1 \
      /usr/lib/rabbitmq/bin/rabbitmq-server -detached" >>"${HA_RMQ_LOG_DIR}/lockwatch-start.log" 2>&1; then
    show_logs 30 "${HA_RMQ_LOG_DIR}/lockwatch-start.log" "${HA_RMQ_LOG_DIR}/${node}.log"
    die "rabbitmq-ha: ${node} did not start"
  fi
  # erl -detached returns before the detached beam.smp exists
  if ! wait_for "${node} process to appear" 20 ha_rmq_running "$i"; then
    show_logs 30 "${HA_RMQ_LOG_DIR}/lockwatch-start.log" "${HA_RMQ_LOG_DIR}/${node}.log"
    die "rabbitmq-ha: ${node} did not start"
  fi
}

ha_rmq_await() {
  if ! wait_for "$(ha_rmq_node "$1")" "$UP_TIMEOUT" ha_rmq_probe "$1"; then
    show_logs 30 "${HA_RMQ_LOG_DIR}/lockwatch-start.log" "${HA_RMQ_LOG_DIR}/$(ha_rmq_node "$1").log"
    die "rabbitmq-ha: $(ha_rmq_node "$1") did not become ready"
  fi
}

rabbitmq_ha_up() {
  local i started=() blank=()
  rabbitmq_install
  ha_rmq_configure
  # Nodes with data start together: each waits for the peers it last ran with.
  for i in 0 1 2; do
    if ! ha_rmq_running "$i"; then
      if [[ -d "$(ha_rmq_dir "$i")" ]]; then ha_rmq_start "$i"; else blank+=("$i"); fi
      started+=("$i")
    fi
  done
  # Blank nodes boot one at a time, each once the cluster is up: 3.10 syncs feature flags with peers still booting
  # when blank nodes discover each other at once, and a node then dies with incompatible_feature_flags.
  for i in 0 1 2; do
    if [[ " ${blank[*]} " != *" $i "* ]]; then ha_rmq_await "$i"; fi
  done
  for i in "${blank[@]}"; do
    ha_rmq_start "$i"
    ha_rmq_await "$i"
  done
  if ! wait_for "all three nodes in one cluster" "$UP_TIMEOUT" ha_rmq_clustered; then
    ha_rmq_ctl 0 cluster_status >&2 || true
    die "rabbitmq-ha: the nodes did not form one cluster"
  fi
  # a node that came back blank holds no replica of the quorum queues until it is given them
  for i in "${started[@]}"; do
    rabbitmq-queues -n "$(ha_rmq_node "$i")" -q grow "$(ha_rmq_node "$i")" all >/dev/null 2>&1 || true
  done
  log "rabbitmq-ha: ready, cluster of 3 on $(ha_rmq_addresses)"
}

ha_rmq_clustered() {
  local running
  running=$(ha_rmq_ctl 0 -q cluster_status --formatter json 2>/dev/null | grep -o '"running_nodes":\[[^]]*\]' || true)
  [[ "$running" == *"$(ha_rmq_node 0)"* && "$running" == *"$(ha_rmq_node 1)"* && "$running" == *"$(ha_rmq_node 2)"* ]]
}

rabbitmq_ha_down() {
  local i pid
  for i in 2 1 0; do
    pid=$(ha_rmq_pid "$i")
    if pid_alive "$pid"; then
      log "rabbitmq-ha: stopping $(ha_rmq_node "$i")"
      timeout "$DOWN_TIMEOUT" rabbitmqctl -n "$(ha_rmq_node "$i")" -q stop >/dev/null 2>&1 || kill -TERM "$pid" 2>/dev/null || true
      if ! wait_for "$(ha_rmq_node "$i") to exit" "$DOWN_TIMEOUT" pid_gone "$pid"; then
        kill -KILL "$pid" 2>/dev/null || true
      fi
    fi
  done
  log "rabbitmq-ha: down"
}

rabbitmq_ha_status() {
  local i rc=0 up=()
  for i in 0 1 2; do
    if ha_rmq_running "$i" && port_listening "$(ha_rmq_port "$i")"; then up+=("$(ha_rmq_node "$i")"); else rc=1; fi
  done
  if ((rc == 0)); then
    printf '%-10s up    %s (cluster of 3: %s)\n' rabbitmq-ha "$(ha_rmq_addresses)" "${up[*]}"
  else
    printf '%-10s down  %s (running: %s)\n' rabbitmq-ha "$(ha_rmq_addresses)" "${up[*]:-none}"
  fi
  return "$rc"
}

# --- PostgreSQL: pg_auto_failover ------------------------------------------------------------------------------
readonly HA_PG_DATA=/var/lib/postgresql/ha
readonly HA_PG_LOG_DIR=/var/log/postgresql/ha
readonly HA_PG_CTL=/usr/lib/postgresql/15/bin/pg_ctl
readonly HA_PG_MONITOR_PORT=5440
readonly HA_PG_NODES=(node1 node2)
readonly HA_PG_MONITOR_URI="postgres://autoctl_node@127.0.0.1:${HA_PG_MONITOR_PORT}/pg_auto_failover?sslmode=disable"

ha_pg_port() { case "$1" in monitor) echo "$HA_PG_MONITOR_PORT" ;; node1) echo 5441 ;; node2) echo 5442 ;; esac; }
ha_pg_jdbc() { printf 'jdbc:postgresql://127.0.0.1:5441,127.0.0.1:5442/lockwatch?targetServerType=primary'; }
# pg_autoctl keeps each node's configuration and state beside the data (XDG directories), so that deleting
# HA_PG_DATA deletes all of it, as a lost disk would
ha_pg_env() { printf 'XDG_CONFIG_HOME=%s/.config XDG_DATA_HOME=%s/.local XDG_RUNTIME_DIR=%s/.run' "$HA_PG_DATA" "$HA_PG_DATA" "$HA_PG_DATA"; }
ha_pg_autoctl() { (cd / && runuser -u postgres -- env $(ha_pg_env) pg_autoctl "$@"); }
ha_pg_psql() { local port=$1; shift; (cd / && runuser -u postgres -- psql -X -q -h 127.0.0.1 -p "$port" -v ON_ERROR_STOP=1 "$@"); }

# The keeper's pid, as pg_autoctl itself reports it
ha_pg_keeper_pid() {
  ha_pg_autoctl status --pgdata "${HA_PG_DATA}/$1" 2>&1 | sed -n 's/.*pg_autoctl is running with pid \([0-9]*\).*/\1/p' | head -n1
}
# pg_autoctl trusts its pid file; the pid must also still be a keeper (pg_autoctl renames itself "pg_autoctl: ...")
ha_pg_running() {
  local pid
  pid=$(ha_pg_keeper_pid "$1")
  pid_alive "$pid" && [[ "$(cat "/proc/${pid}/comm" 2>/dev/null)" == pg_autoctl* ]]
}

# pg_autoctl processes of a node, by the PGDATA in their environment (they rename themselves, "pg_autoctl: ...")
ha_pg_processes() {
  local pid
  for pid in $(pgrep -u postgres '^pg_autoctl' || true); do
    if tr '\0' '\n' <"/proc/${pid}/environ" 2>/dev/null | grep -qx "PGDATA=${HA_PG_DATA}/$1"; then echo "$pid"; fi
  done
}

ha_pg_run() {
  local node=$1 orphans
  # The node has no keeper (or this would not be called), so whatever is left of an earlier one goes: a child that
  # outlived its keeper restarts the node's server on its own (a drill's lost primary came back that way), and the
  # runtime files, left by a keeper killed or by a machine that restarted with the data kept, name a semaphore that
  # no longer exists, so that the new keeper quits on it.
  orphans=$(ha_pg_processes "$node")
  if [[ -n "$orphans" ]]; then
    log "postgres-ha: stopping what is left of ${node}'s last keeper (pid ${orphans//$'\n'/ })"
    kill -KILL $orphans 2>/dev/null || true
  fi
  rm -f "${HA_PG_DATA}/.run/pg_autoctl${HA_PG_DATA}/${node}/"*.pid
  log "postgres-ha: starting ${node}'s keeper (pg_autoctl run, port $(ha_pg_port "$node"))"
  # in a session of its own, holding none of this script's descriptors (its lock, its output)
  (cd / && exec setsid runuser -u postgres -- env $(ha_pg_env) pg_autoctl run --pgdata "${HA_PG_DATA}/${node}" \
    >>"${HA_PG_LOG_DIR}/${node}.log" 2>&1 </dev/null 9>&- &)
  wait_for "${node}'s keeper" 30 ha_pg_running "$node" || { show_logs 30 "${HA_PG_LOG_DIR}/${node}.log"; die "postgres-ha: ${node} did not start"; }
}

# node1 is the primary and node2 its synchronous standby, or the other way round after a failover. The monitor's
# word alone is not enough: just after a restart it still reports the states it held before, while the nodes' servers
# are not up yet. So the primary must answer, out of recovery, with a synchronous standby streaming from it.
ha_pg_pair_ready() {
  local states primary
  states=$(ha_pg_autoctl show state --pgdata "${HA_PG_DATA}/monitor" --json 2>/dev/null | tr -d ' \n' || true)
  [[ $(grep -o '"current_group_state":"primary"' <<<"$states" | wc -l) -eq 1 &&
    $(grep -o '"current_group_state":"secondary"' <<<"$states" | wc -l) -eq 1 ]] || return 1
  primary=$(ha_pg_primary_port) || return 1
  [[ "$(ha_pg_psql "$primary" -d postgres -Atc \
    "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming' AND sync_state IN ('sync', 'quorum')" \
    2>/dev/null)" -ge 1 ]]
}

# The monitor's server answers; 2 (give up) if its keeper is gone. psql's own exit codes are not passed on: its 2
# (no connection) would read as "gone" to wait_for.
ha_pg_monitor_answers() {
  ha_pg_running monitor || return 2
  ha_pg_psql "$HA_PG_MONITOR_PORT" -d pg_auto_failover -Atc 'SELECT 1' >/dev/null 2>&1 || return 1
}

# The same, asking the primary for a checkpoint every 5 s meanwhile: a node coming back after a failover may copy
# the primary afresh (pg_basebackup), which first waits for a checkpoint spread over minutes unless one is asked for
HA_PG_NUDGED=0
ha_pg_pair_ready_or_nudge() {
  ha_pg_pair_ready && return 0
  if ((SECONDS - HA_PG_NUDGED >= 5)); then
    HA_PG_NUDGED=$SECONDS
    local primary
    if primary=$(ha_pg_primary_port); then ha_pg_psql "$primary" -d postgres -c CHECKPOINT >/dev/null 2>&1 || true; fi
  fi
  return 1
}

ha_pg_primary_port() {
  local node
  for node in "${HA_PG_NODES[@]}"; do
    if [[ "$(ha_pg_psql "$(ha_pg_port "$node")" -d postgres -Atc 'SELECT pg_is_in_recovery()' 2>/dev/null)" == f ]]; then
      ha_pg_port "$node"
      return 0
    fi
  done
  return 1
}

postgres_ha_up() {
  local node
  ensure_packages "postgresql-${PG_VERSION}" "postgresql-${PG_VERSION}-auto-failover" pg-auto-failover-cli
  install -d -o postgres -g postgres "$HA_PG_DATA" "$HA_PG_LOG_DIR" "${HA_PG_DATA}/.config" "${HA_PG_DATA}/.local"
  install -d -m 0700 -o postgres -g postgres "${HA_PG_DATA}/.run"
  if [[ ! -d "${HA_PG_DATA}/monitor" ]]; then
    log "postgres-ha: creating the monitor on ${HA_PG_MONITOR_PORT}"
    ha_pg_autoctl create monitor --pgdata "${HA_PG_DATA}/monitor" --pgport "$HA_PG_MONITOR_PORT" --hostname 127.0.0.1 \
      --auth trust --no-ssl --pgctl "$HA_PG_CTL" >>"${HA_PG_LOG_DIR}/monitor.log" 2>&1 ||
      { show_logs 30 "${HA_PG_LOG_DIR}/monitor.log"; die "postgres-ha: the monitor was not created"; }
  fi
  ha_pg_running monitor || ha_pg_run monitor
  wait_for "the monitor" 30 ha_pg_monitor_answers || { show_logs 30 "${HA_PG_LOG_DIR}/monitor.log"; die "postgres-ha: the monitor does not answer"; }
  # The monitor's decisions, faster than its defaults (checks every 5 s, unhealthy after 20 s, then 30 s for the
  # lost primary to demote itself) so that a lost primary is replaced within the 30 s the drills allow. Waiting
  # less for the demotion is safe here: a primary cut off from its synchronous standby cannot commit anyway.
  ha_pg_psql "$HA_PG_MONITOR_PORT" -d pg_auto_failover -c "ALTER SYSTEM SET pgautofailover.health_check_period = '2s'" \
    -c "ALTER SYSTEM SET pgautofailover.health_check_timeout = '2s'" \
    -c "ALTER SYSTEM SET pgautofailover.node_considered_unhealthy_timeout = '8s'" \
    -c "ALTER SYSTEM SET pgautofailover.primary_demote_timeout = '8s'" -c "SELECT pg_reload_conf()" >/dev/null
  for node in "${HA_PG_NODES[@]}"; do
    if [[ ! -d "${HA_PG_DATA}/${node}" ]]; then
      log "postgres-ha: creating ${node} on $(ha_pg_port "$node")"
      ha_pg_autoctl create postgres --pgdata "${HA_PG_DATA}/${node}" --pgport "$(ha_pg_port "$node")" --hostname 127.0.0.1 \
        --name "$node" --auth trust --no-ssl --dbname lockwatch --monitor "$HA_PG_MONITOR_URI" --pgctl "$HA_PG_CTL" \
        >>"${HA_PG_LOG_DIR}/${node}.log" 2>&1 || { show_logs 30 "${HA_PG_LOG_DIR}/${node}.log"; die "postgres-ha: ${node} was not created"; }
    fi
    ha_pg_running "$node" || ha_pg_run "$node"
  done
  if ! wait_for "a primary and its standby" "$UP_TIMEOUT" ha_pg_pair_ready_or_nudge; then
    ha_pg_autoctl show state --pgdata "${HA_PG_DATA}/monitor" >&2 || true
    die "postgres-ha: no primary with its standby"
  fi
  local primary
  primary=$(ha_pg_primary_port) || die "postgres-ha: no node answers as the primary"
  # the service's role and database; replicated to the standby like everything else
  ha_pg_psql "$primary" -d lockwatch -Atc "SELECT 1 FROM pg_roles WHERE rolname = '${PG_USER}'" | grep -q 1 ||
    ha_pg_psql "$primary" -d lockwatch -c "CREATE ROLE ${PG_USER} LOGIN PASSWORD '${PG_PASSWORD}'" \
      -c "ALTER DATABASE lockwatch OWNER TO ${PG_USER}" -c "ALTER SCHEMA public OWNER TO ${PG_USER}" >/dev/null
  log "postgres-ha: ready, primary on ${primary}: $(ha_pg_jdbc)"
}

postgres_ha_down() {
  local node
  for node in node2 node1 monitor; do
    if [[ -d "${HA_PG_DATA}/${node}" ]] && ha_pg_running "$node"; then
      log "postgres-ha: stopping ${node}"
      ha_pg_autoctl stop --pgdata "${HA_PG_DATA}/${node}" >/dev/null 2>&1 || true
      wait_for "${node} to stop" "$DOWN_TIMEOUT" bash -c "! kill -0 $(ha_pg_keeper_pid "$node") 2>/dev/null" || true
    fi
  done
  wait_for "PostgreSQL HA ports to close" "$DOWN_TIMEOUT" bash -c \
    "! ss -Hltn 'sport = :5440' | grep -q . && ! ss -Hltn 'sport = :5441' | grep -q . && ! ss -Hltn 'sport = :5442' | grep -q ." ||
    die "postgres-ha: still listening"
  log "postgres-ha: down"
}

postgres_ha_status() {
  local primary
  if ha_pg_running monitor && ha_pg_pair_ready && primary=$(ha_pg_primary_port); then
    printf '%-10s up    %s (primary on %s, synchronous standby)\n' postgres-ha "127.0.0.1:5441,127.0.0.1:5442" "$primary"
  else
    printf '%-10s down  %s\n' postgres-ha "127.0.0.1:5441,127.0.0.1:5442"
    return 1
  fi
}

# A switchover: the monitor has the standby promoted and the old primary follow it, as after the loss of the primary
# but without losing it; waits until the other node is the primary and the pair is whole again
postgres_ha_failover() {
  local before after
  before=$(ha_pg_primary_port) || die "postgres-ha: no primary to fail over from"
  log "postgres-ha: failover from the primary on ${before}"
  ha_pg_autoctl perform failover --pgdata "${HA_PG_DATA}/monitor" >>"${HA_PG_LOG_DIR}/monitor.log" 2>&1 ||
    die "postgres-ha: pg_autoctl perform failover failed (${HA_PG_LOG_DIR}/monitor.log)"
  wait_for "the new primary and its standby" "$UP_TIMEOUT" ha_pg_pair_ready || die "postgres-ha: the pair did not form again"
  after=$(ha_pg_primary_port) || die "postgres-ha: no primary after the failover"
  [[ "$after" != "$before" ]] || die "postgres-ha: the primary is still on ${before}"
  log "postgres-ha: the primary is now on ${after}"
}
