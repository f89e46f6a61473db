#!/usr/bin/env bash
# Times JAX's jnp.linalg programs (a 1024x1024 float32 Cholesky and SVD, exported by
# tools/bench/linalg_jax.py) run by xlamesh over its LAPACK kernels (BenchmarkLinalgJAXProgram,
# package jit) against JAX running the same functions itself, in interleaved rounds, and prints
# a Markdown report: each side's median of the rounds and the ratio. Run it alone: on 2 cores
# anything beside it moves the numbers. Needs `make setup` (the plugin and its LAPACK) and the
# oracle venv.
#
# Environment:
#   ROUNDS=5         rounds
#   BENCHTIME=2s     Go's -benchtime and the JAX script's --min-time, per program per round
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
cache=${XLAMESH_CACHE_DIR:-$PWD/.cache}
rounds=${ROUNDS:-5}
benchtime=${BENCHTIME:-2s}
venv=$cache/oracle-venv
if [[ ! -x $venv/bin/python ]]; then
	echo "linalg bench: no JAX venv at $venv (make oracle-env creates it)" >&2
	exit 1
fi
if ! [[ $rounds =~ ^[1-9][0-9]*$ && $benchtime =~ ^[0-9.]+s$ ]]; then
	echo "linalg bench: want ROUNDS a positive integer and BENCHTIME seconds like 2s (got $rounds, $benchtime)" >&2
	exit 2
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export JAX_PLATFORMS=cpu TF_CPP_MIN_LOG_LEVEL=2
"$venv/bin/python" tools/bench/linalg_jax.py --export "$out/programs"
go test -c -o "$out/jit.test" ./jit
export XLAMESH_LINALG_BENCH_DIR=$out/programs
for ((r = 1; r <= rounds; r++)); do
	echo "linalg bench: round $r/$rounds (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	cut -d' ' -f1-3 /proc/loadavg >>"$out/load"
	(cd jit && "$out/jit.test" -test.run='^$' -test.bench='^BenchmarkLinalgJAXProgram$' \
		-test.benchtime="$benchtime" -test.count=1) | tee -a "$out/go.all" | grep '^Benchmark' >>"$out/go" || {
		cat "$out/go.all" >&2
		exit 1
	}
	"$venv/bin/python" tools/bench/linalg_jax.py "$out/programs" --min-time "${benchtime%s}" >>"$out/jax"
done
python3 - "$out" "$rounds" "$benchtime" "$(nproc)" <<'PY'
import json, re, statistics, sys, os
out, rounds, benchtime, nproc = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
names = ["Cholesky1024", "SVD1024"]
go = {n: [] for n in names}
for line in open(os.path.join(out, "go")):
    m = re.match(r"BenchmarkLinalgJAXProgram/(\w+)-\d+\s+\d+\s+(\d+) ns/op", line)
    if m:
        go[m.group(1)].append(int(m.group(2)) / 1e6)
jax = {n: [] for n in names}
for line in open(os.path.join(out, "jax")):
    d = json.loads(line)
    for n in names:
        jax[n].append(d[n]["ns_per_op"] / 1e6)
    version = d["_jax_version"]
loads = [l.split()[0] for l in open(os.path.join(out, "load"))]
print("%d rounds, %s per program per side per round, on %s cores; JAX %s on its own CPU client; "
      "load (1 min) at round starts %s." % (rounds, benchtime, nproc, version, ", ".join(loads)))
print()
print("| program | xlamesh (median ms) | JAX (median ms) | xlamesh / JAX | goal |")
print("| --- | --- | --- | --- | --- |")
for n in names:
    g, j = statistics.median(go[n]), statistics.median(jax[n])
    print("| %s | %.1f | %.1f | %.2f | <= 1.1 |" % (n, g, j, g / j))
print()
print("Rounds (ms): " + "; ".join("%s xlamesh %s, JAX %s" % (
    n, ", ".join("%.1f" % v for v in go[n]), ", ".join("%.1f" % v for v in jax[n])) for n in names) + ".")
PY
