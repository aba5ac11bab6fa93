#!/usr/bin/env bash
# Generation and compile time of all testdata CRDs. Prints the figures for BENCHMARKS.md.
# Usage: scripts/bench-codegen.sh   (KAPI_TESTDATA overrides ../shared/testdata)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo bench -q -p kapi-codegen --bench generate
# Compile time of the generated code alone: dependencies stay built, only the crate that
# includes the generated testdata (and its build script) is rebuilt.
for profile in dev release; do
  cargo build -q -p kapi-codegen-compile-tests --profile "$profile"
  cargo clean -q -p kapi-codegen-compile-tests --profile "$profile"
  start=$(date +%s.%N)
  cargo build -q -p kapi-codegen-compile-tests --profile "$profile"
  end=$(date +%s.%N)
  awk -v p="$profile" -v s="$start" -v e="$end" 'BEGIN { printf "compile generated code (%s profile, deps prebuilt): %.1f s\n", p, e - s }'
done
