#!/usr/bin/env bash
# The whole kapi-bench matrix (issue #6): builds kapi (with etcd) and kapi-bench in
# release, then runs `kapi-bench all`, which measures kapi on both backends beside its
# limits (raw etcd, the embedded store's own API, a bare hyper server), memory and
# restart, and rewrites the generated section of BENCHMARKS.md and docs/bench/*.svg.
# Needs protoc (the etcd client) and Debian's etcd on PATH. Under 10 minutes on two
# cores; extra arguments go to `kapi-bench all` (e.g. --smoke, --backend embedded).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p kapi --features kapi/etcd -p kapi-bench --features kapi-bench/etcd
target_dir="${CARGO_TARGET_DIR:-target}"
exec "$target_dir/release/kapi-bench" all --kapi "$target_dir/release/kapi" --out BENCHMARKS.md "$@"
