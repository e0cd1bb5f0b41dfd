#!/usr/bin/env bash
# scripts/bench-broker-auth.sh [--devices 100000] [--duration 20] [--concurrency 8]
#   — what RabbitMQ's questions about devices (its HTTP auth backend, POST /broker-auth/…) cost lockwatch.
#
# Starts the service (profile external, the benchmark's own database lockwatch_bench and virtual host), registers N
# sensors each with a credential of its own (one made through the API, the others copied from it in SQL: the same
# hash, each its own login), and for --duration s per phase, from --concurrency keep-alive connections as the broker's
# HTTP client keeps them, asks: the yardstick (GET /actuator/health/liveness: the same server and filters, no
# question), topic questions (a random device publishing with its own sensor's key), user questions (a random
# device logging in). Prints per phase the answers a second, their ratio to the yardstick, p50/p99 and the CPU per
# answer of the service and PostgreSQL, then how many topic questions the broker would ask of N devices for a few
# publishing intervals and cache periods. Asserts no figure; fails only if an answer is a refusal.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/bench.sh
bench_help "$0" "$@"
bench_services
bench_isolation lockwatch-bench lockwatch_bench
bench_build
bench_run "$BENCH_OUT/service.pid" target/test-classes: BrokerAuthBenchmark "$@"
