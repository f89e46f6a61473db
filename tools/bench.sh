#!/usr/bin/env bash
# Runs xlamesh's Go benchmarks and their JAX counterparts in one session and writes
# docs/benchmarks.md with the ratios. Needs the plugin and the oracle venv (make bench installs both).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv=${XLAMESH_CACHE_DIR:-$PWD/.cache}/oracle-venv
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "bench: go test -bench (mesh, lower, jit)"
go test -run='^$' -bench=. -benchmem -benchtime=${BENCHTIME:-2s} ./mesh/ ./lower/ ./jit/ | tee "$out/go.txt" | grep -E '^(Benchmark|ok|FAIL)'
echo "bench: JAX counterparts"
JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=8 "$venv/bin/python" tools/bench/jax_bench.py > "$out/jax.json"
"$venv/bin/python" tools/bench/report.py "$out/go.txt" "$out/jax.json" > docs/benchmarks.md
cat docs/benchmarks.md
