#!/usr/bin/env bash
# scripts/bench-device-connections.sh [--devices 5000] [--rate 500] [--duration 60]
#   — devices as they connect to RabbitMQ: each MQTT connection logged in with a credential of its own.
#
# Starts the service on port 8080 (where scripts/services.sh tells RabbitMQ to ask about devices; profile external,
# the benchmark's own database and virtual host), registers N sensors each with a credential, connects N MQTT clients
# (a minimal MQTT 3.1.1 client on plain sockets), each publishing its own sensor's readings with QoS 1, R a second in
# all, for --duration s. Prints RabbitMQ's memory per connection, the CPU per reading of RabbitMQ, the service and
# PostgreSQL, and the questions RabbitMQ asked lockwatch (from the routes' counts). Asserts no figure.
# Port 8080 must be free. RabbitMQ's cache period is its own (auth_cache.cache_ttl, 10 s in scripts/services.sh;
# `rabbitmqctl eval 'application:set_env(rabbitmq_auth_backend_cache, cache_ttl, 60000).'` tries another).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bench.sh
bench_help "$0" "$@"
bench_services
bench_isolation lockwatch-bench lockwatch_bench
bench_build
bench_run "$BENCH_OUT/service.pid" target/test-classes: DeviceConnectionsBenchmark "$@"
