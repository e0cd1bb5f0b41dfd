# shellcheck shell=bash
# The HA topology of scripts/services.sh --ha, on this one machine, beside the single-node services (other ports,
# directories and node names, so that both can run in the same sitting):
#   rabbitmq   a cluster of three RabbitMQ nodes lwha1..3@localhost, one Erlang cookie (the rabbitmq user's),
#              formed by classic peer discovery on first boot; quorum queues replicate over all three.
#              amqp://guest:guest@127.0.0.1:5681,5682,5683  (spring.rabbitmq.addresses takes the list)
#              management 15681..15683, MQTT 1891..1893, distribution 25681..25683
#              config /etc/rabbitmq/ha/, data /var/lib/rabbitmq/ha/<node>/, logs /var/log/rabbitmq/ha/
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
[rabbitmq_auth_backend_cache,rabbitmq_auth_backend_http,rabbitmq_consistent_hash_exchange,rabbitmq_management,rabbitmq_mqtt].
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

ha_rmq_pid() {
  local i=$1 pid
  pid=$(pid_from_file "$(ha_rmq_pid_file "$i")")
  pid_alive "$pid" || pid=$(pgrep -u rabbitmq -f "beam\\.smp .*-sname $(ha_rmq_node "$i") .*-s rabbit boot" | head -n1 || true)
  pid_alive "$pid" || pid=$(pgrep -u rabbitmq -f "beam\\.smp .*-s rabbit boot.*$(ha_rmq_node "$i")" | head -n1 || true)
  printf '%s' "$pid"
}
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

rabbitmq_ha_up() {
  local i started=()
  rabbitmq_install
  ha_rmq_configure
  for i in 0 1 2; do
    if ! ha_rmq_running "$i"; then
      ha_rmq_start "$i"
      started+=("$i")
    fi
  done
  for i in 0 1 2; do
    if ! wait_for "$(ha_rmq_node "$i")" "$UP_TIMEOUT" ha_rmq_probe "$i"; then
      show_logs 30 "${HA_RMQ_LOG_DIR}/lockwatch-start.log" "${HA_RMQ_LOG_DIR}/$(ha_rmq_node "$i").log"
      die "rabbitmq-ha: $(ha_rmq_node "$i") did not become ready"
    fi
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
