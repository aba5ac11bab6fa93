#!/usr/bin/env bash
# Build-time figures for BENCHMARKS.md. Run on a quiet machine.
#
#   scripts/bench-build.sh edit      the schema-edit loop: from saving a change to
#                                    schemas/widget.yaml to `kapi serve` (debug build)
#                                    answering with the new field, in this checkout's
#                                    target folder, three times (~2 min once built)
#   scripts/bench-build.sh first     the README's first command after a fresh clone:
#                                    `cargo build -p kapi` in an empty target folder
#                                    (crates downloaded already), then start to ready
#   scripts/bench-build.sh release   a clean release build of kapi with etcd, then the
#                                    built-ins' crate (kapi-kube) alone (~3 GB of disk)
#   scripts/bench-build.sh           all three
set -euo pipefail
cd "$(dirname "$0")/.."

# Temporary folders to remove, and the schema to put back, whatever happens.
temporary=()
schema=schemas/widget.yaml
saved=""
cleanup() {
  if [[ -n "$saved" ]]; then cp "$saved" "$schema"; fi
  rm -rf "${temporary[@]}"
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'; }
machine() {
  echo "machine: $(nproc) cores ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), rustc $(rustc --version | cut -d' ' -f2), commit $(git rev-parse --short=12 HEAD)"
}

# A free loopback port.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Starts `$1 serve` on plain HTTP with data in `$2`, and waits (60 s at most) until it
# creates a Widget and answers with field `$3` kept (a field its schema does not know
# would be pruned). Stops the server.
serve_until_field() {
  local kapi=$1 data=$2 field=$3 port pid deadline answer name
  port=$(free_port)
  "$kapi" serve --insecure-http --listen "127.0.0.1:$port" --data-dir "$data" >"$data/log" 2>&1 &
  pid=$!
  name="w-$(date +%s%N)"
  deadline=$((SECONDS + 60))
  until answer=$(curl -sf -X POST -H 'Content-Type: application/json' \
      --data "{\"apiVersion\":\"example.kapi.dev/v1\",\"kind\":\"Widget\",\"metadata\":{\"name\":\"$name\"},\"spec\":{\"color\":\"red\",\"$field\":\"x\"}}" \
      "http://127.0.0.1:$port/apis/example.kapi.dev/v1/namespaces/default/widgets" 2>/dev/null); do
    if ((SECONDS > deadline)) || ! kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      echo "kapi did not answer on port $port; its log:" >&2
      cat "$data/log" >&2
      return 1
    fi
    sleep 0.02
  done
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  if ! grep -Eq "\"$field\": ?\"x\"" <<<"$answer"; then
    echo "the created Widget has no $field: $answer" >&2
    return 1
  fi
}

edit_loop() {
  local data
  saved=$(mktemp)
  data=$(mktemp -d)
  temporary+=("$saved" "$data")
  cp "$schema" "$saved"
  echo "warming up: cargo build -p kapi"
  cargo build -q -p kapi
  for i in 1 2 3; do
    local field="benchEdit$i" start built
    # The new field goes first among Widget v1's spec properties.
    awk -v f="$field" '!done && /^                size:$/ { print "                " f ":"; print "                  type: string"; done = 1 } { print }' \
      "$saved" >"$schema"
    start=$(now)
    cargo build -q -p kapi
    built=$(since "$start")
    serve_until_field target/debug/kapi "$data" "$field"
    echo "schema edit $i: built in ${built} s, answering with the new field after $(since "$start") s"
    cp "$saved" "$schema"
  done
  cargo build -q -p kapi
  machine
}

first_build() {
  local target data start built
  target=$(mktemp -d)
  data=$(mktemp -d)
  temporary+=("$target" "$data")
  cargo fetch -q
  start=$(now)
  CARGO_TARGET_DIR="$target" cargo build -q -p kapi
  built=$(since "$start")
  serve_until_field "$target/debug/kapi" "$data" color
  echo "first build after a fresh clone (crates downloaded): cargo build -p kapi in ${built} s, answering after $(since "$start") s"
  machine
}

release_build() {
  local target start full alone gen
  target=$(mktemp -d)
  temporary+=("$target")
  start=$(now)
  CARGO_TARGET_DIR="$target" cargo build -q --release -p kapi --features etcd
  full=$(since "$start")
  echo "clean release build of kapi (every dependency, --features etcd): ${full} s"
  CARGO_TARGET_DIR="$target" cargo clean -q --release -p kapi-kube
  start=$(now)
  CARGO_TARGET_DIR="$target" cargo build -q --release -p kapi --features etcd
  alone=$(since "$start")
  echo "release build of kapi-kube alone (generation + compile, dependencies built): ${alone} s"
  gen=$(find "$target/release/build" -path '*kapi-kube-*/out/kapi_generated.rs' | head -1)
  echo "generated code: $(wc -l <"$gen") lines, $(grep -c '^\s*pub struct\|^\s*pub enum' "$gen") types, $(du -k "$gen" | cut -f1) KiB"
  echo "binary: $(du -k "$target/release/kapi" | cut -f1) KiB"
  machine
}

case "${1:-all}" in
  edit) edit_loop ;;
  first) first_build ;;
  release) release_build ;;
  all) edit_loop; first_build; release_build ;;
  *) echo "usage: $0 [edit|first|release]" >&2; exit 2 ;;
esac
