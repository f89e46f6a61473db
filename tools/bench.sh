#!/usr/bin/env bash
# Runs xlamesh's Go benchmarks and their JAX counterparts (tools/bench/jax_bench.py) in interleaved
# rounds and writes docs/benchmarks.md: min and median of each side, the ratio of medians, and the
# goal table of the issue on asynchronous dispatch and transfers. Needs the plugin and the oracle
# venv (make bench installs both).
#
# Each round runs every Go benchmark once (-count=1, appended to one file that benchstat reads as
# -count output) and then the JAX script once. The Go test binaries are built once, before round 1.
#
# Environment:
#   ROUNDS=5        rounds; with fewer than 5 the report goes only to BENCH_OUT, unless BENCH_DOC is set
#   BENCHTIME=1s    time per timed benchmark, Go's -benchtime and the JAX script's --min-time
#   XFER_ITERS=10   iterations of the 256 MiB Put, ToHost and memory copy on both sides
#   BENCH_OUT=DIR   where the raw output goes (default $XLAMESH_CACHE_DIR/bench, else .cache/bench)
#   BENCH_DOC=FILE  the report (default docs/benchmarks.md)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
cache=${XLAMESH_CACHE_DIR:-$root/.cache}
venv=$cache/oracle-venv
rounds=${ROUNDS:-5}
benchtime=${BENCHTIME:-1s}
xfer=${XFER_ITERS:-10}
out=${BENCH_OUT:-$cache/bench}
doc=${BENCH_DOC:-docs/benchmarks.md}
if [[ -z ${BENCH_DOC:-} && $rounds =~ ^[0-9]+$ && $rounds -lt 5 ]]; then
	doc=  # a quick check run does not replace the committed report
fi

if ! [[ $rounds =~ ^[1-9][0-9]*$ && $xfer =~ ^[1-9][0-9]*$ && $benchtime =~ ^[0-9.]+s$ ]]; then
	echo "bench: want ROUNDS and XFER_ITERS positive integers, BENCHTIME seconds like 1s (got $rounds, $xfer, $benchtime)" >&2
	exit 2
fi
if [[ ! -x $venv/bin/python ]]; then
	echo "bench: no JAX venv at $venv (make oracle-env creates it)" >&2
	exit 1
fi

# Go benchmark selections: the 256 MiB transfers and their memory-copy anchor run a fixed number of
# iterations (the same as JAX's), the rest for BENCHTIME.
xfer_re='^Benchmark(Put256MiB|ToHost256MiB|ToHostFlat256MiB|Memcpy256MiB|MemcpyFresh256MiB)$'
jit_re='^Benchmark(Call|Call1Device|CallArgs1|CallArgs8|CallArgs64|CallArgs256|LoweringCacheHit|Chained1000x1Device|Chained1000x8Devices|Matmul2048x1|Matmul2048x2|Matmul2048x8)$'
mesh_re='^BenchmarkDevicesIndicesMap$'
lower_re='^BenchmarkLower5000$'
train_re='^BenchmarkTrainStep$'
gpt_re='^BenchmarkGPTStep(JAXProgram)?$'
pjrt_re='^Benchmark(Execute8Devices|FloorCall8Devices|ExecuteArgs256|FloorArgs256|FloorChained1000x1Device|FloorChained1000x8Devices)$'

mkdir -p "$out/bin"
rm -f "$out/go.txt" "$out/jax.jsonl" "$out/load.txt"
echo "bench: building the test binaries (pjrt, mesh, lower, jit, examples/mlp, examples/gpt) and cmd/xlamesh"
for p in pjrt mesh lower jit examples/mlp examples/gpt; do
	go test -c -o "$out/bin/${p//\//_}.test" "./$p/"
done
go build -o "$out/bin/xlamesh" ./cmd/xlamesh
"$out/bin/xlamesh" devices -devices 8 >"$out/devices.txt" # the plugin the Go side runs on
# JAX's own program of examples/gpt's step, for BenchmarkGPTStepJAXProgram (run on the plugin).
JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=8 \
	"$venv/bin/python" tools/oracle/gpt.py --export "$out/gpt_jax.mlir"
export XLAMESH_GPT_JAX_MLIR=$out/gpt_jax.mlir

# gobench PKG REGEXP BENCHTIME: one -count=1 run of a package's test binary, in the package's
# directory as go test runs it, appended to go.txt.
gobench() {
	(cd "$root/$1" && "$out/bin/${1//\//_}.test" -test.run='^$' -test.bench="$2" -test.benchtime="$3" \
		-test.count=1 -test.benchmem) | tee -a "$out/go.txt" | grep -E '^(Benchmark|FAIL|panic)' || true
	if grep -qE '^(FAIL|panic:)' "$out/go.txt"; then
		echo "bench: Go benchmarks of $1 failed; output in $out/go.txt" >&2
		exit 1
	fi
}

nproc=$(nproc)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s)
for ((r = 1; r <= rounds; r++)); do
	cut -d' ' -f1-3 /proc/loadavg >>"$out/load.txt"
	echo "bench: round $r/$rounds: Go (load $(cut -d' ' -f1-3 /proc/loadavg))"
	gobench jit "$xfer_re" "${xfer}x"
	gobench jit "$jit_re" "$benchtime"
	gobench pjrt "$pjrt_re" "$benchtime"
	gobench mesh "$mesh_re" "$benchtime"
	gobench lower "$lower_re" "$benchtime"
	gobench examples/mlp "$train_re" "$benchtime"
	gobench examples/gpt "$gpt_re" "$benchtime"
	echo "bench: round $r/$rounds: JAX"
	JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=8 \
		"$venv/bin/python" tools/bench/jax_bench.py --min-time "${benchtime%s}" --iters "$xfer" >>"$out/jax.jsonl"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# Where the CPU goes in the 8-device call rows, xlamesh side: perf samples every thread of the
# process (Go, the plugin's XLA threads, the kernel), which Go's own profiler does not.
rm -f "$out"/profile-*.txt
if command -v perf >/dev/null && perf record -q -o /dev/null -- true >/dev/null 2>&1; then
	for b in Call Chained1000x8Devices; do
		echo "bench: perf profile of $b"
		(cd "$root/jit" && perf record -q -F 2000 -o "$out/perf-$b.data" -- "$out/bin/jit.test" -test.run='^$' \
			-test.bench="^Benchmark$b\$" -test.benchtime="$benchtime" >/dev/null 2>&1)
		perf report -i "$out/perf-$b.data" --no-children --sort dso -g none --stdio 2>/dev/null \
			| grep -v '^#' | grep -v '^$' >"$out/profile-$b-dso.txt" || true
		perf report -i "$out/perf-$b.data" --no-children --sort dso,sym -g none --stdio 2>/dev/null \
			| grep -v '^#' | grep -v '^$' | head -n 12 >"$out/profile-$b-sym.txt" || true
	done
else
	echo "bench: perf cannot record here; the report says so" >&2
fi
bash tools/bench/scale.sh "$out" "$rounds" # the scale table (issue 31): its own rounds, into $out/scale.md
raw=$(realpath "$out")
raw=${raw#"$root"/} # relative to the checkout when it lies inside
elapsed=$(($(date +%s) - start))

"$venv/bin/python" tools/bench/report.py --go "$out/go.txt" --jax "$out/jax.jsonl" \
	--plugin "$out/devices.txt" --load-before "$load_before" --load-after "$load_after" \
	--load-rounds "$out/load.txt" --nproc "$nproc" --rounds "$rounds" --benchtime "$benchtime" \
	--iters "$xfer" --elapsed "$elapsed" --raw "$raw" --profiles "$out" >"$out/benchmarks.md"
cat "$out/scale.md" >>"$out/benchmarks.md"
cat "$out/benchmarks.md"
if [[ -n $doc ]]; then
	cp "$out/benchmarks.md" "$doc"
	echo "bench: $rounds round(s) in ${elapsed}s; wrote $doc; raw output in $out (benchstat $out/go.txt)"
else
	echo "bench: $rounds round(s) in ${elapsed}s; fewer than 5 rounds, so only $out/benchmarks.md was written (set BENCH_DOC to write elsewhere)"
fi
