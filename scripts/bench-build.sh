#!/usr/bin/env bash
# Clean release build of the `kapi` binary with every built-in resource, in a fresh target
# folder (nothing cached but the downloaded crates), then the kapi-kube crate (the built-ins, and the
# kapi binary over it) alone with its dependencies built. Prints the figures for BENCHMARKS.md.
# Usage: scripts/bench-build.sh   (run on a quiet machine; needs ~3 GB of disk)
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(mktemp -d)
trap 'rm -rf "$target"' EXIT
time_it() {
  local start end
  start=$(date +%s.%N)
  "$@"
  end=$(date +%s.%N)
  awk -v s="$start" -v e="$end" 'BEGIN { printf "%.0f", e - s }'
}
full=$(time_it env CARGO_TARGET_DIR="$target" cargo build -q --release -p kapi --features etcd)
echo "clean release build of kapi (every dependency, --features etcd): ${full} s"
CARGO_TARGET_DIR="$target" cargo clean -q --release -p kapi-kube
alone=$(time_it env CARGO_TARGET_DIR="$target" cargo build -q --release -p kapi --features etcd)
echo "release build of kapi-kube alone (generation + compile, dependencies built): ${alone} s"
gen=$(find "$target/release/build" -path '*kapi-kube-*/out/kapi_generated.rs' | head -1)
echo "generated code: $(wc -l < "$gen") lines, $(grep -c '^\s*pub struct\|^\s*pub enum' "$gen") types, $(du -k "$gen" | cut -f1) KiB"
echo "binary: $(du -k "$target/release/kapi" | cut -f1) KiB"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), rustc $(rustc --version | cut -d' ' -f2)"
