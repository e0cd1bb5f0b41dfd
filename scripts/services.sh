#!/usr/bin/env bash
#
# scripts/services.sh — install (if missing), start, stop and check the backing
# services lockwatch needs, from Debian's own packages, without systemd.
#
# Usage:
#   scripts/services.sh up      [rabbitmq|postgres|clickhouse|mosquitto ...]
#   scripts/services.sh down    [rabbitmq|postgres|clickhouse|mosquitto ...]
#   scripts/services.sh restart [rabbitmq|postgres|clickhouse|mosquitto ...]
#   scripts/services.sh status  [rabbitmq|postgres|clickhouse|mosquitto ...]
#   scripts/services.sh --ha up|down|restart|status [rabbitmq|postgres]
#   scripts/services.sh --ha failover postgres
#
#   With no service names the command acts on all four services (with --ha,
#   on both of its: rabbitmq and postgres).
#   up      installs missing packages (apt-get), writes config, starts the
#           service if it is not running and waits until it is ready; exits
#           non-zero with the tail of the service's log if it is not ready in
#           time. Idempotent: on running services it only re-checks.
#   down    stops the service cleanly and waits until its port is closed.
#   status  prints one line per service and exits non-zero if any requested
#           service is down.
#   Must run as root (it installs packages and switches to service users).
#   --ha    the high-availability topology instead, beside the single-node one
#           (scripts/lib/ha.sh says what it is): RabbitMQ as a cluster of three
#           nodes, PostgreSQL as a primary and a synchronous standby under
#           pg_auto_failover. ClickHouse stays one node here (its replicated schema is in
#           docker/ and docs/scaling.md).
#
# What it sets up (everything listens on 127.0.0.1 only):
#   RabbitMQ 3.10   amqp://guest:guest@127.0.0.1:5672   node rabbit@localhost
#                   management http://127.0.0.1:15672 (guest/guest)
#                   plugins: rabbitmq_management, rabbitmq_consistent_hash_exchange, rabbitmq_mqtt,
#                   rabbitmq_auth_backend_http and _cache (devices: asked of lockwatch on
#                   http://127.0.0.1:${LOCKWATCH_HTTP_PORT:-8080}/broker-auth/, answers kept 10 s)
#                   MQTT 3.1.1 tcp://127.0.0.1:1883 (no anonymous: a device credential, or guest from
#                   loopback; into amq.topic)
#                   config /etc/rabbitmq/rabbitmq.conf, rabbitmq-env.conf
#                   logs   /var/log/rabbitmq/
#   PostgreSQL 15   jdbc:postgresql://127.0.0.1:5432/lockwatch
#                   user lockwatch, password lockwatch (owner of db lockwatch)
#                   config /etc/postgresql/15/main/conf.d/lockwatch.conf
#                   log    /var/log/postgresql/postgresql-15-main.log
#   ClickHouse 18.16 http://127.0.0.1:8123 (native 127.0.0.1:9000)
#                   database lockwatch, user default, no password
#                   config /etc/clickhouse-server/config.d/lockwatch.xml
#                   logs   /var/log/clickhouse-server/
#   Mosquitto 2.0   tcp://127.0.0.1:1884, standing in for a device network's own broker (Zigbee2MQTT's):
#                   user zigbee2mqtt, password zigbee2mqtt; no anonymous
#                   config /etc/mosquitto/lockwatch.conf, log /var/log/mosquitto/lockwatch.log
#
set -euo pipefail

readonly ALL_SERVICES=(postgres rabbitmq clickhouse mosquitto)

# --- PostgreSQL -------------------------------------------------------------
readonly PG_VERSION=15
readonly PG_CLUSTER=main
readonly PG_PORT=5432
readonly PG_CONF_FILE="/etc/postgresql/${PG_VERSION}/${PG_CLUSTER}/conf.d/lockwatch.conf"
readonly PG_HBA_FILE="/etc/postgresql/${PG_VERSION}/${PG_CLUSTER}/pg_hba.conf"
readonly PG_LOG="/var/log/postgresql/postgresql-${PG_VERSION}-${PG_CLUSTER}.log"
readonly PG_DB=lockwatch PG_USER=lockwatch PG_PASSWORD=lockwatch

# --- RabbitMQ ---------------------------------------------------------------
readonly RMQ_NODE=rabbit@localhost
readonly RMQ_PORT=5672 RMQ_MGMT_PORT=15672 RMQ_DIST_PORT=25672 RMQ_MQTT_PORT=1883
readonly RMQ_ETC=/etc/rabbitmq
readonly RMQ_LOG_DIR=/var/log/rabbitmq
readonly RMQ_LOG="${RMQ_LOG_DIR}/${RMQ_NODE}.log"
readonly RMQ_START_LOG="${RMQ_LOG_DIR}/lockwatch-start.log"
readonly RMQ_PID_FILE="/var/lib/rabbitmq/mnesia/${RMQ_NODE}.pid"
# Where RabbitMQ asks lockwatch about devices (its HTTP port), and for how long it keeps an answer.
readonly LOCKWATCH_URL="http://127.0.0.1:${LOCKWATCH_HTTP_PORT:-8080}"
readonly RMQ_AUTH_CACHE_TTL=10000

# --- ClickHouse -------------------------------------------------------------
readonly CH_HTTP_PORT=8123 CH_TCP_PORT=9000
readonly CH_CONFIG=/etc/clickhouse-server/config.xml
readonly CH_CONF_FILE=/etc/clickhouse-server/config.d/lockwatch.xml
readonly CH_PID_DIR=/run/clickhouse-server
readonly CH_PID_FILE="${CH_PID_DIR}/clickhouse-server.pid"
readonly CH_LOG_DIR=/var/log/clickhouse-server
readonly CH_ERR_LOG="${CH_LOG_DIR}/clickhouse-server.err.log"
readonly CH_STDERR_LOG="${CH_LOG_DIR}/stderr.log" # daemon stderr (startup errors)
readonly CH_START_LOG="${CH_LOG_DIR}/lockwatch-start.log"
readonly CH_URL="http://127.0.0.1:${CH_HTTP_PORT}"

# --- Mosquitto ---------------------------------------------------------------
readonly MQ_PORT=1884
readonly MQ_CONF=/etc/mosquitto/lockwatch.conf
readonly MQ_PASSWD=/etc/mosquitto/lockwatch.passwd
readonly MQ_LOG=/var/log/mosquitto/lockwatch.log
readonly MQ_PID_FILE=/run/mosquitto/lockwatch.pid
readonly MQ_USER=zigbee2mqtt MQ_PASSWORD=zigbee2mqtt
# Readiness / shutdown timeouts in seconds (override from the environment).
readonly UP_TIMEOUT="${SERVICES_UP_TIMEOUT:-90}"
readonly DOWN_TIMEOUT="${SERVICES_DOWN_TIMEOUT:-60}"

# ============================================================================
# helpers
# ============================================================================

log() { printf '[services] %s\n' "$*" >&2; }
die() { printf '[services] ERROR: %s\n' "$*" >&2; exit 1; }

# wait_for DESCRIPTION TIMEOUT_SECONDS COMMAND [ARGS...]
# Runs COMMAND every half second until it succeeds (returns 0) or the timeout
# expires (returns 1). If COMMAND returns 2 the wait is abandoned at once
# (used by probes that can tell the process has already died).
wait_for() {
  local what=$1 timeout=$2 rc
  shift 2
  local deadline=$((SECONDS + timeout))
  while true; do
    rc=0
    "$@" || rc=$?
    [[ $rc -eq 0 ]] && return 0
    if [[ $rc -eq 2 ]]; then
      log "gave up waiting for ${what}: process is gone"
      return 1
    fi
    if ((SECONDS >= deadline)); then
      log "timed out after ${timeout}s waiting for ${what}"
      return 1
    fi
    sleep 0.5
  done
}

# Is something listening on 127.0.0.1 (or any address) on this TCP port?
port_listening() { [[ -n "$(ss -Hltn "sport = :$1")" ]]; }
port_closed() { ! port_listening "$1"; }

pid_alive() { [[ -n "${1:-}" ]] && kill -0 "$1" 2>/dev/null; }
pid_gone() { ! pid_alive "$1"; }
pid_from_file() { if [[ -r "$1" ]]; then tr -dc '0-9' <"$1"; fi; }

# Print the last lines of each given log file (for failure diagnosis).
# show_logs LINES FILE... — print the last LINES lines of each non-empty file.
show_logs() {
  local n=$1 f
  shift
  for f in "$@"; do
    if [[ -s "$f" ]]; then
      printf '\n----- last %s lines of %s -----\n' "$n" "$f" >&2
      tail -n "$n" "$f" >&2 || true
    fi
  done
  printf '\n' >&2
}

# write_if_changed FILE [OWNER:GROUP] — write stdin to FILE only if the content
# differs; returns 0 if the file changed, 1 if it was already up to date.
write_if_changed() {
  local file=$1 owner=${2:-} tmp
  tmp=$(mktemp)
  cat >"$tmp"
  if [[ -f "$file" ]] && cmp -s "$tmp" "$file"; then
    rm -f "$tmp"
    return 1
  fi
  mkdir -p "$(dirname "$file")"
  install -m 0644 "$tmp" "$file" || die "cannot write ${file}"
  rm -f "$tmp"
  if [[ -n "$owner" ]]; then chown "$owner" "$file" || die "cannot chown ${file}"; fi
  log "wrote ${file}"
  return 0
}

pkg_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

APT_UPDATED=0
# ensure_packages PKG... — apt-get install whatever is missing, without letting
# the packages' maintainer scripts start services (policy-rc.d returns 101).
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    pkg_installed "$p" || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0

  log "installing: ${missing[*]}"
  local own_policy=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\n# temporary, from lockwatch scripts/services.sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod 0755 /usr/sbin/policy-rc.d
    own_policy=1
  fi
  local rc=0
  {
    if ((APT_UPDATED == 0)); then
      apt-get update -q && APT_UPDATED=1
    fi &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  } || rc=$?
  ((own_policy)) && rm -f /usr/sbin/policy-rc.d
  ((rc == 0)) || die "apt-get install ${missing[*]} failed (exit ${rc})"
}

# ============================================================================
# PostgreSQL
# ============================================================================

postgres_install() {
  ensure_packages "postgresql-${PG_VERSION}" "postgresql-client-${PG_VERSION}" postgresql-common
  if ! pg_lsclusters -h "$PG_VERSION" "$PG_CLUSTER" 2>/dev/null | grep -q .; then
    log "creating PostgreSQL cluster ${PG_VERSION}/${PG_CLUSTER}"
    pg_createcluster "$PG_VERSION" "$PG_CLUSTER"
  fi
}

# Returns 0 if the config changed (a running server then needs a restart).
postgres_configure() {
  local changed=1
  write_if_changed "$PG_CONF_FILE" postgres:postgres <<EOF && changed=0
# Managed by lockwatch scripts/services.sh — local development settings.
listen_addresses = '127.0.0.1'
port = ${PG_PORT}
max_connections = 200
shared_buffers = 256MB
EOF
  # Debian's default pg_hba.conf already has "host all all 127.0.0.1/32
  # scram-sha-256"; add an explicit password rule only if it is missing.
  if ! grep -Eq '^[[:space:]]*host[[:space:]]+all[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+(scram-sha-256|md5)' "$PG_HBA_FILE" &&
    ! grep -q '^host lockwatch lockwatch 127.0.0.1/32' "$PG_HBA_FILE"; then
    echo "host lockwatch lockwatch 127.0.0.1/32 scram-sha-256" >>"$PG_HBA_FILE"
    log "added lockwatch rule to ${PG_HBA_FILE}"
    changed=0
  fi
  return "$changed"
}

postgres_running() { pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" status >/dev/null 2>&1; }
postgres_ready() { pg_isready -q -h 127.0.0.1 -p "$PG_PORT"; }

psql_admin() { (cd / && runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 -p "$PG_PORT" "$@"); }

postgres_bootstrap() {
  psql_admin -d postgres <<SQL
DO \$\$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${PG_USER}') THEN
    CREATE ROLE ${PG_USER} LOGIN PASSWORD '${PG_PASSWORD}';
    RAISE NOTICE 'created role ${PG_USER}';
  ELSE
    -- keep the documented credentials valid even if someone changed them
    ALTER ROLE ${PG_USER} LOGIN PASSWORD '${PG_PASSWORD}';
  END IF;
END
\$\$;
SQL
  if [[ "$(psql_admin -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '${PG_DB}'")" != 1 ]]; then
    psql_admin -d postgres -c "CREATE DATABASE ${PG_DB} OWNER ${PG_USER}"
    log "created database ${PG_DB}"
  fi
}

postgres_up() {
  postgres_install
  if postgres_configure && postgres_running; then
    log "postgres: configuration changed, restarting"
    postgres_down
  fi
  if ! postgres_running; then
    log "postgres: starting cluster ${PG_VERSION}/${PG_CLUSTER}"
    if ! pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" start; then
      show_logs 40 "$PG_LOG"
      die "postgres: pg_ctlcluster start failed"
    fi
  fi
  if ! wait_for "postgres on 127.0.0.1:${PG_PORT}" "$UP_TIMEOUT" postgres_ready; then
    show_logs 40 "$PG_LOG"
    die "postgres did not become ready"
  fi
  postgres_bootstrap
  log "postgres: ready on 127.0.0.1:${PG_PORT} (db ${PG_DB}, user ${PG_USER})"
}

postgres_down() {
  if postgres_running; then
    log "postgres: stopping"
    pg_ctlcluster -m fast "$PG_VERSION" "$PG_CLUSTER" stop ||
      pg_ctlcluster -m immediate "$PG_VERSION" "$PG_CLUSTER" stop || true
  fi
  wait_for "postgres port ${PG_PORT} to close" "$DOWN_TIMEOUT" port_closed "$PG_PORT" ||
    die "postgres still listening on ${PG_PORT}"
  log "postgres: down"
}

postgres_status() {
  if postgres_ready; then
    printf '%-10s up    127.0.0.1:%s\n' postgres "$PG_PORT"
  else
    printf '%-10s down  127.0.0.1:%s\n' postgres "$PG_PORT"
    return 1
  fi
}

# ============================================================================
# RabbitMQ
# ============================================================================

rabbitmq_install() { ensure_packages rabbitmq-server; }

# rabbitmq_conf AMQP_PORT MANAGEMENT_PORT DISTRIBUTION_PORT MQTT_PORT: a node's rabbitmq.conf (the single node's,
# and each node's of the HA cluster, which adds its cluster's lines)
rabbitmq_conf() {
  cat <<EOF
# Managed by lockwatch scripts/services.sh
listeners.tcp.default = 127.0.0.1:$1
management.tcp.ip = 127.0.0.1
management.tcp.port = $2
distribution.listener.interface = 127.0.0.1
distribution.listener.port_range.min = $3
distribution.listener.port_range.max = $3
# guest/guest stays enabled and restricted to loopback connections.
loopback_users.guest = true
# Larger messages are refused at publish: the service reads each whole before its 4 KB check, up to its prefetch
# (2,000) at a time, so this bounds them at 256 MB (docker/rabbitmq/lockwatch.conf says the same).
max_message_size = 131072
# Sensors over MQTT (QoS 1) to lockwatch/readings/<sensor id>: the plugin publishes to amq.topic with routing key
# lockwatch.readings.<sensor id>, which the service binds to its readings exchange.
mqtt.listeners.tcp.default = 127.0.0.1:$4
mqtt.vhost = /
mqtt.exchange = amq.topic
# Devices log in with their own credentials (no anonymous MQTT): the broker's own users first (guest, the service's),
# then lockwatch's registry through the HTTP auth backend, behind a cache of ${RMQ_AUTH_CACHE_TTL} ms. lockwatch
# answers on ${LOCKWATCH_URL}; while it is away, device logins and (once the cache has run out) their publishes are
# refused, and the broker's own users go on.
auth_backends.1 = internal
auth_backends.2 = cache
auth_cache.cached_backend = http
auth_cache.cache_ttl = ${RMQ_AUTH_CACHE_TTL}
auth_http.http_method = post
auth_http.user_path = ${LOCKWATCH_URL}/broker-auth/user
auth_http.vhost_path = ${LOCKWATCH_URL}/broker-auth/vhost
auth_http.resource_path = ${LOCKWATCH_URL}/broker-auth/resource
auth_http.topic_path = ${LOCKWATCH_URL}/broker-auth/topic
mqtt.allow_anonymous = false
EOF
}

rabbitmq_configure() {
  local changed=1
  write_if_changed "${RMQ_ETC}/rabbitmq-env.conf" rabbitmq:rabbitmq <<EOF && changed=0
# Managed by lockwatch scripts/services.sh (sourced by the rabbitmq scripts).
NODENAME=${RMQ_NODE}
# epmd (started by the first Erlang node) listens on loopback only.
export ERL_EPMD_ADDRESS=127.0.0.1
# Every MQTT device holds a connection, so a file each: as many as the hard limit allows (the soft one is 1,024).
ulimit -S -n "\$(ulimit -H -n)" 2>/dev/null || true
EOF
  write_if_changed "${RMQ_ETC}/rabbitmq.conf" rabbitmq:rabbitmq \
    < <(rabbitmq_conf "$RMQ_PORT" "$RMQ_MGMT_PORT" "$RMQ_DIST_PORT" "$RMQ_MQTT_PORT") && changed=0
  # Same format rabbitmq-plugins --offline writes; written directly because
  # it is much faster than booting an Erlang VM on every `up`.
  write_if_changed "${RMQ_ETC}/enabled_plugins" rabbitmq:rabbitmq <<EOF && changed=0
[rabbitmq_auth_backend_cache,rabbitmq_auth_backend_http,rabbitmq_consistent_hash_exchange,rabbitmq_management,rabbitmq_mqtt].
EOF
  return "$changed"
}

# A pid is a given node's broker only if it is a booting or running beam.smp whose environment names that node
# (the single node's has no RABBITMQ_NODENAME at all). A pid file left by an earlier boot of the machine may name a
# pid that another process has since been given; trusting it would skip the node's start.
rabbit_pid_is() {
  local pid=$1 node=$2 name
  pid_alive "$pid" && tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null | grep -q 'beam\.smp .*-s rabbit boot' || return 1
  name=$(tr '\0' '\n' <"/proc/${pid}/environ" 2>/dev/null | sed -n 's/^RABBITMQ_NODENAME=//p')
  [[ "$name" == "$node" || ( -z "$name" && "$node" == "$RMQ_NODE" ) ]]
}
# The pid of the node's broker, from its pid file or else from the running processes (the file appears only some
# seconds into boot; CLI tools run their own beam.smp without `-s rabbit boot`); nothing if it runs nowhere
rabbit_node_pid() {
  local node=$1 pid_file=$2 pid candidate
  pid=$(pid_from_file "$pid_file")
  if rabbit_pid_is "$pid" "$node"; then printf '%s' "$pid"; return 0; fi
  for candidate in $(pgrep -u rabbitmq -f 'beam\.smp .*-s rabbit boot' || true); do
    if rabbit_pid_is "$candidate" "$node"; then printf '%s' "$candidate"; return 0; fi
  done
}
rabbitmq_pid() { rabbit_node_pid "$RMQ_NODE" "$RMQ_PID_FILE"; }
rabbitmq_running() { pid_alive "$(rabbitmq_pid)"; }

# Ready = the broker finished booting (await_startup) and AMQP is listening.
# Returns 2 if the broker process is gone (crashed during boot).
rabbitmq_probe() {
  rabbitmq_running || return 2
  timeout 60 rabbitmqctl -q await_startup >/dev/null 2>&1 && port_listening "$RMQ_PORT" && port_listening "$RMQ_MQTT_PORT"
}

# Print the end of the logs plus the errors logged since this start (the
# broker logs a lot while shutting down after a failed boot), then exit 1.
RMQ_LOG_MARK=0
rabbitmq_fail() {
  show_logs 20 "$RMQ_START_LOG" "$RMQ_LOG"
  if [[ -s "$RMQ_LOG" ]]; then
    printf -- '----- errors in %s since this start (last 30) -----\n' "$RMQ_LOG" >&2
    tail -n "+$((RMQ_LOG_MARK + 1))" "$RMQ_LOG" | grep -E '\[(error|critical)\]' | tail -n 30 >&2 || true
  fi
  die "$1"
}

rabbitmq_up() {
  rabbitmq_install
  if rabbitmq_configure && rabbitmq_running; then
    log "rabbitmq: configuration changed, restarting"
    rabbitmq_down
  fi
  if ! rabbitmq_running; then
    log "rabbitmq: starting ${RMQ_NODE}"
    install -d -o rabbitmq -g rabbitmq "$RMQ_LOG_DIR"
    rm -f "$RMQ_PID_FILE"
    RMQ_LOG_MARK=$(wc -l <"$RMQ_LOG" 2>/dev/null || echo 0)
    # -detached: the wrapper su's to the rabbitmq user and erl daemonizes.
    if ! ERL_EPMD_ADDRESS=127.0.0.1 rabbitmq-server -detached >>"$RMQ_START_LOG" 2>&1; then
      rabbitmq_fail "rabbitmq: rabbitmq-server -detached failed"
    fi
    # erl -detached returns before the detached beam.smp exists.
    if ! wait_for "rabbitmq process to appear" 20 rabbitmq_running; then
      rabbitmq_fail "rabbitmq: broker process did not start"
    fi
  fi
  if ! wait_for "rabbitmq on 127.0.0.1:${RMQ_PORT}" "$UP_TIMEOUT" rabbitmq_probe; then
    rabbitmq_fail "rabbitmq did not become ready"
  fi
  log "rabbitmq: ready on 127.0.0.1:${RMQ_PORT} (management 127.0.0.1:${RMQ_MGMT_PORT}, MQTT 127.0.0.1:${RMQ_MQTT_PORT})"
}

rabbitmq_down() {
  local pid
  pid=$(rabbitmq_pid)
  if pid_alive "$pid"; then
    log "rabbitmq: stopping ${RMQ_NODE}"
    if ! timeout "$DOWN_TIMEOUT" rabbitmqctl -q stop >/dev/null 2>&1; then
      log "rabbitmq: rabbitmqctl stop failed, sending SIGTERM to ${pid}"
      kill -TERM "$pid" 2>/dev/null || true
    fi
    if ! wait_for "rabbitmq process ${pid} to exit" "$DOWN_TIMEOUT" pid_gone "$pid"; then
      log "rabbitmq: killing ${pid}"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  if command -v epmd >/dev/null; then epmd -kill >/dev/null 2>&1 || true; fi
  wait_for "rabbitmq port ${RMQ_PORT} to close" "$DOWN_TIMEOUT" port_closed "$RMQ_PORT" ||
    die "rabbitmq still listening on ${RMQ_PORT}"
  log "rabbitmq: down"
}

rabbitmq_status() {
  if rabbitmq_running && port_listening "$RMQ_PORT"; then
    printf '%-10s up    127.0.0.1:%s (management 127.0.0.1:%s, MQTT 127.0.0.1:%s)\n' rabbitmq "$RMQ_PORT" "$RMQ_MGMT_PORT" "$RMQ_MQTT_PORT"
  else
    printf '%-10s down  127.0.0.1:%s\n' rabbitmq "$RMQ_PORT"
    return 1
  fi
}

# ============================================================================
# ClickHouse
# ============================================================================

clickhouse_install() { ensure_packages clickhouse-server clickhouse-client curl; }

clickhouse_configure() {
  # 18.16 config files use the <yandex> root. A listen_host here replaces the
  # stock ::1 + 127.0.0.1 pair (verified: the server then binds 127.0.0.1 only,
  # although preprocessed_configs/config.xml still shows all three entries).
  write_if_changed "$CH_CONF_FILE" clickhouse:clickhouse <<'EOF'
<?xml version="1.0"?>
<!-- Managed by lockwatch scripts/services.sh -->
<yandex>
    <listen_host>127.0.0.1</listen_host>
</yandex>
EOF
}

# The server's pid: from its pid file if that pid is still the server (a file from an earlier boot of the machine
# may name a pid since given to another process), or else the clickhouse-owned clickhouse-server process (comm is
# truncated to 15 characters).
clickhouse_pid() {
  local pid
  pid=$(pid_from_file "$CH_PID_FILE")
  [[ -n "$pid" && "$(cat "/proc/${pid}/comm" 2>/dev/null)" == clickhouse-serv ]] ||
    pid=$(pgrep -u clickhouse -x clickhouse-serv | head -n1 || true)
  printf '%s' "$pid"
}
clickhouse_running() { pid_alive "$(clickhouse_pid)"; }

# Returns 2 if the server process is gone (it exits at once on a bad config
# or a port already in use).
clickhouse_probe() {
  clickhouse_running || return 2
  [[ "$(curl -fsS --max-time 2 "${CH_URL}/ping" 2>/dev/null)" == "Ok." ]]
}

clickhouse_up() {
  clickhouse_install
  if clickhouse_configure && clickhouse_running; then
    log "clickhouse: configuration changed, restarting"
    clickhouse_down
  fi
  if ! clickhouse_running; then
    log "clickhouse: starting"
    install -d -o clickhouse -g clickhouse "$CH_PID_DIR" "$CH_LOG_DIR" /var/lib/clickhouse
    rm -f "$CH_PID_FILE"
    if ! runuser -u clickhouse -- clickhouse-server --daemon \
      --config-file="$CH_CONFIG" --pid-file="$CH_PID_FILE" >>"$CH_START_LOG" 2>&1; then
      show_logs 40 "$CH_START_LOG" "$CH_STDERR_LOG" "$CH_ERR_LOG"
      die "clickhouse: clickhouse-server --daemon failed"
    fi
  fi
  if ! wait_for "clickhouse on ${CH_URL}" "$UP_TIMEOUT" clickhouse_probe; then
    show_logs 10 "$CH_START_LOG" "$CH_STDERR_LOG"
    show_logs 40 "$CH_ERR_LOG"
    die "clickhouse did not become ready"
  fi
  curl -fsS --max-time 30 --data-binary 'CREATE DATABASE IF NOT EXISTS lockwatch' "${CH_URL}/" ||
    die "clickhouse: CREATE DATABASE lockwatch failed"
  log "clickhouse: ready on ${CH_URL} (native 127.0.0.1:${CH_TCP_PORT}, db lockwatch)"
}

clickhouse_down() {
  local pid
  pid=$(clickhouse_pid)
  if pid_alive "$pid"; then
    log "clickhouse: stopping (pid ${pid})"
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_for "clickhouse process ${pid} to exit" "$DOWN_TIMEOUT" pid_gone "$pid"; then
      log "clickhouse: killing ${pid}"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$CH_PID_FILE"
  wait_for "clickhouse port ${CH_HTTP_PORT} to close" "$DOWN_TIMEOUT" port_closed "$CH_HTTP_PORT" ||
    die "clickhouse still listening on ${CH_HTTP_PORT}"
  log "clickhouse: down"
}

clickhouse_status() {
  if clickhouse_probe >/dev/null 2>&1; then
    printf '%-10s up    127.0.0.1:%s (native 127.0.0.1:%s)\n' clickhouse "$CH_HTTP_PORT" "$CH_TCP_PORT"
  else
    printf '%-10s down  127.0.0.1:%s\n' clickhouse "$CH_HTTP_PORT"
    return 1
  fi
}

# ============================================================================
# Mosquitto: a device network's own broker, for the adapters' integration tests
# ============================================================================

mosquitto_install() { ensure_packages mosquitto mosquitto-clients; }

# Returns 0 if the config changed (a running broker then needs a restart).
mosquitto_configure() {
  local changed=1
  install -d -o mosquitto -g mosquitto /run/mosquitto /var/log/mosquitto
  # its own log, written as its user: a start that fails says why there
  touch "$MQ_LOG" && chown mosquitto:mosquitto "$MQ_LOG"
  write_if_changed "$MQ_CONF" <<EOF && changed=0
# Managed by lockwatch scripts/services.sh: a device network's broker (Zigbee2MQTT's) for the adapters' tests
listener ${MQ_PORT} 127.0.0.1
allow_anonymous false
password_file ${MQ_PASSWD}
persistence false
# a subscriber that falls behind a burst (the adapter at 2,000 uplinks a second) is queued for, not dropped:
# Mosquitto's default drops QoS 1 messages past 1,000 queued for one client (docs/devices.md)
max_queued_messages 0
pid_file ${MQ_PID_FILE}
log_dest file ${MQ_LOG}
EOF
  if [[ ! -s "$MQ_PASSWD" ]]; then
    install -m 0640 -o root -g mosquitto /dev/null "$MQ_PASSWD"
    mosquitto_passwd -b "$MQ_PASSWD" "$MQ_USER" "$MQ_PASSWORD" || die "mosquitto: mosquitto_passwd failed"
    changed=0
  fi
  return "$changed"
}

mosquitto_pid() {
  local pid
  pid=$(pid_from_file "$MQ_PID_FILE")
  [[ -n "$pid" && "$(cat "/proc/${pid}/comm" 2>/dev/null)" == mosquitto ]] || pid=""
  printf '%s' "$pid"
}
mosquitto_running() { pid_alive "$(mosquitto_pid)"; }

mosquitto_probe() {
  mosquitto_running || return 2
  port_listening "$MQ_PORT"
}

mosquitto_up() {
  mosquitto_install
  if mosquitto_configure && mosquitto_running; then
    log "mosquitto: configuration changed, restarting"
    mosquitto_down
  fi
  if ! mosquitto_running; then
    log "mosquitto: starting"
    rm -f "$MQ_PID_FILE"
    if ! mosquitto -c "$MQ_CONF" -d >>"$MQ_LOG" 2>&1; then
      show_logs 20 "$MQ_LOG"
      die "mosquitto: mosquitto -d failed"
    fi
  fi
  if ! wait_for "mosquitto on 127.0.0.1:${MQ_PORT}" "$UP_TIMEOUT" mosquitto_probe; then
    show_logs 20 "$MQ_LOG"
    die "mosquitto did not become ready"
  fi
  log "mosquitto: ready on tcp://127.0.0.1:${MQ_PORT} (user ${MQ_USER})"
}

mosquitto_down() {
  local pid
  pid=$(mosquitto_pid)
  if pid_alive "$pid"; then
    log "mosquitto: stopping (pid ${pid})"
    kill -TERM "$pid" 2>/dev/null || true
    wait_for "mosquitto process ${pid} to exit" "$DOWN_TIMEOUT" pid_gone "$pid" || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$MQ_PID_FILE"
  wait_for "mosquitto port ${MQ_PORT} to close" "$DOWN_TIMEOUT" port_closed "$MQ_PORT" ||
    die "mosquitto still listening on ${MQ_PORT}"
  log "mosquitto: down"
}

mosquitto_status() {
  if mosquitto_probe >/dev/null 2>&1; then
    printf '%-10s up    127.0.0.1:%s (user %s)\n' mosquitto "$MQ_PORT" "$MQ_USER"
  else
    printf '%-10s down  127.0.0.1:%s\n' mosquitto "$MQ_PORT"
    return 1
  fi
}

# ============================================================================
# main
# ============================================================================

usage() {
  sed -n '3,28p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

main() {
  local ha=0
  if [[ "${1:-}" == --ha ]]; then
    ha=1
    shift
    # shellcheck source=scripts/lib/ha.sh
    source "$(dirname "$0")/lib/ha.sh"
  fi
  (($# >= 1)) || usage
  local action=$1
  shift
  case "$action" in
    up | down | restart | status) ;;
    failover) ((ha)) && [[ "${1:-}" == postgres && $# -eq 1 ]] || die "failover is for --ha postgres only" ;;
    -h | --help | help) usage ;;
    *) log "unknown command: ${action}"; usage ;;
  esac

  local services=("$@") s
  if ((ha)); then
    ((${#services[@]} > 0)) || services=(rabbitmq postgres)
    for s in "${services[@]}"; do
      [[ "$s" == rabbitmq || "$s" == postgres ]] || die "unknown HA service: ${s} (expected: rabbitmq, postgres)"
    done
    services=("${services[@]/%/_ha}")
  fi
  ((${#services[@]} > 0)) || services=("${ALL_SERVICES[@]}")
  for s in "${services[@]}"; do
    case "$s" in
      postgres | rabbitmq | clickhouse | mosquitto | rabbitmq_ha | postgres_ha) ;;
      *) die "unknown service: ${s} (expected: ${ALL_SERVICES[*]})" ;;
    esac
  done

  if [[ "$action" == status ]]; then
    local rc=0
    for s in "${services[@]}"; do "${s}_status" || rc=1; done
    return "$rc"
  fi

  ((EUID == 0)) || die "must run as root"
  # Serialize concurrent up/down/restart invocations.
  exec 9>/run/lockwatch-services.lock
  flock -w 600 9 || die "another services.sh is still running"

  # `9>&-` hides the lock fd from everything started below (bash keeps its own
  # close-on-exec copy), so daemons such as postgres or beam.smp do not inherit
  # it and hold the lock forever.
  for s in "${services[@]}"; do
    case "$action" in
      up) "${s}_up" 9>&- ;;
      failover) "${s}_failover" 9>&- ;;
      down) "${s}_down" 9>&- ;;
      restart)
        "${s}_down" 9>&-
        "${s}_up" 9>&-
        ;;
    esac
  done
}

main "$@"
