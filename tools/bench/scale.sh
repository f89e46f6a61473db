#!/usr/bin/env bash
# The scale table of `make bench` (issue 31): xlamesh's BenchmarkScale* (mesh, lower) and
# tools/bench/jax_scale.py on fake devices, interleaved in rounds, then tools/bench/scale_report.py
# writes the markdown section to OUT/scale.md. tools/bench.sh calls it; it can also run alone.
#
# usage: tools/bench/scale.sh OUT [ROUNDS]
# Environment: SCALE_BENCHTIME=0.2s (Go's -benchtime and JAX's --min-time per size), and the
# XLAMESH_CACHE_DIR / oracle venv of tools/bench.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
out=${1:?usage: scale.sh OUT [ROUNDS]}
rounds=${2:-1}
benchtime=${SCALE_BENCHTIME:-0.2s}
cache=${XLAMESH_CACHE_DIR:-$root/.cache}
venv=$cache/oracle-venv
if ! [[ $rounds =~ ^[1-9][0-9]*$ && $benchtime =~ ^[0-9.]+s$ ]]; then
	echo "bench scale: want ROUNDS a positive integer and SCALE_BENCHTIME seconds like 0.2s (got $rounds, $benchtime)" >&2
	exit 2
fi
mkdir -p "$out/bin"
rm -f "$out/scale-go.txt" "$out/scale-jax.jsonl"
for p in mesh lower; do
	[[ -x $out/bin/$p.test ]] || go test -c -o "$out/bin/$p.test" "./$p/"
done

scalebench() { # PKG REGEXP: one -count=1 run, appended to scale-go.txt
	(cd "$root/$1" && "$out/bin/$1.test" -test.run='^$' -test.bench="$2" -test.benchtime="$benchtime" \
		-test.count=1 -test.benchmem) >>"$out/scale-go.txt"
	if grep -qE '^(FAIL|panic:)' "$out/scale-go.txt"; then
		echo "bench scale: Go benchmarks of $1 failed; output in $out/scale-go.txt" >&2
		exit 1
	fi
}

start=$(date +%s)
for ((r = 1; r <= rounds; r++)); do
	echo "bench scale: round $r/$rounds: Go (load $(cut -d' ' -f1-3 /proc/loadavg))"
	scalebench mesh '^BenchmarkScale'
	scalebench lower '^BenchmarkScaleCollectivesLowering$'
	echo "bench scale: round $r/$rounds: JAX"
	# 8,192 CPU devices so that JAX can lower for them; the other rows use fake devices.
	JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=8192 \
		"$venv/bin/python" tools/bench/jax_scale.py --min-time "${benchtime%s}" >>"$out/scale-jax.jsonl"
done
"$venv/bin/python" tools/bench/scale_report.py --go "$out/scale-go.txt" --jax "$out/scale-jax.jsonl" \
	--rounds "$rounds" --benchtime "$benchtime" --elapsed "$(($(date +%s) - start))" >"$out/scale.md"
echo "bench scale: $rounds round(s); the section is in $out/scale.md"
