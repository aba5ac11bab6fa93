#!/usr/bin/env bash
# Storage and API benchmarks: release builds (cargo's bench profile), loopback only, a
# real etcd for the etcd figures. Prints the tables recorded in BENCHMARKS.md.
# Usage: scripts/bench.sh [storage] [api]   (both by default)
#   KAPI_BENCH_RUNS=N   measured runs per figure, after one warm-up run (default 5)
#   KAPI_BENCH_ETCD=0   embedded backend only (the etcd backend needs protoc to build
#                       and Debian's etcd-server to run)
set -euo pipefail
cd "$(dirname "$0")/.."
features=()
if [ "${KAPI_BENCH_ETCD:-1}" != 0 ]; then features=(--features etcd); fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(storage api); fi

load() { echo "machine: $(nproc) cores; load average (1/5/15 min): $(cut -d' ' -f1-3 /proc/loadavg)"; }

# Build everything first, so that compiling does not overlap the measurements.
for target in "${targets[@]}"; do
  case "$target" in
    storage) cargo bench -q -p kapi-storage --bench storage "${features[@]}" --no-run ;;
    api) cargo bench -q -p kapi --bench api "${features[@]}" --no-run ;;
    *) echo "unknown benchmark $target (storage, api)" >&2; exit 2 ;;
  esac
done
for target in "${targets[@]}"; do
  echo "== $target benchmark ($(date -u +%FT%TZ))"
  load
  case "$target" in
    storage) cargo bench -q -p kapi-storage --bench storage "${features[@]}" ;;
    api) cargo bench -q -p kapi --bench api "${features[@]}" ;;
  esac
  load
done
