#!/usr/bin/env bash
# Times package checkpoint against JAX's array_serialization on tensorstore (tools/bench/
# checkpoint_jax.py) and the disk itself (dd), in interleaved rounds, and prints a Markdown
# report: each side's median of the rounds, the ratios, and the disk's rates. Run it alone: on
# 2 cores anything beside it moves the numbers.
#
# Before the rounds, JAX restores a checkpoint BenchmarkSave1GiB wrote (XLAMESH_CKPT_BENCH_KEEP)
# and checks every value: what is timed is a save JAX reads.
#
# Each round runs BenchmarkSave1GiB and BenchmarkRestore1GiB (checkpoint/bench_test.go, -benchtime
# ITERSx), then the JAX script (ITERS runs of each after a warm-up), then dd writing 1 GiB with
# conv=fsync and reading it back with iflag=direct: the disk's own rates. (Both restores read
# checkpoints they have just written, mostly from the page cache.)
#
# Environment:
#   ROUNDS=3   rounds
#   ITERS=3    saves and restores per side per round
#   MIB=1024   the array's size
#   DIR=...    where the checkpoints go (default a new directory under $XLAMESH_CACHE_DIR/bench)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
cache=${XLAMESH_CACHE_DIR:-$PWD/.cache}
rounds=${ROUNDS:-3}
iters=${ITERS:-3}
mib=${MIB:-1024}
venv=$cache/oracle-venv
if [[ ! -x $venv/bin/python ]]; then
	echo "checkpoint bench: no JAX venv at $venv (make oracle-env creates it)" >&2
	exit 1
fi
dir=${DIR:-$cache/bench/checkpoint}
mkdir -p "$dir"
out=$(mktemp -d)
trap 'rm -rf "$out" "$dir"/save_* "$dir"/restore "$dir"/jax_* "$dir"/dd "$dir"/check' EXIT
go test -c -o "$out/checkpoint.test" ./checkpoint
export XLAMESH_CKPT_BENCH_MIB=$mib XLAMESH_CKPT_BENCH_DIR=$dir
export JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=8 TF_CPP_MIN_LOG_LEVEL=2
rm -rf "$dir/check"
(cd checkpoint && XLAMESH_CKPT_BENCH_KEEP="$dir/check" "$out/checkpoint.test" -test.run='^$' \
	-test.bench='^BenchmarkSave1GiB$' -test.benchtime=1x) >/dev/null
"$venv/bin/python" tools/bench/checkpoint_jax.py "$dir" --mib "$mib" --check "$dir/check" >&2
rm -rf "$dir/check"
for ((r = 1; r <= rounds; r++)); do
	echo "checkpoint bench: round $r/$rounds (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	cut -d' ' -f1-3 /proc/loadavg >>"$out/load"
	(cd checkpoint && "$out/checkpoint.test" -test.run='^$' -test.bench='^Benchmark(Save|Restore)1GiB$' \
		-test.benchtime="${iters}x" -test.count=1) | grep '^Benchmark' >>"$out/go"
	"$venv/bin/python" tools/bench/checkpoint_jax.py "$dir" --mib "$mib" --iters "$iters" >>"$out/jax"
	dd if=/dev/zero of="$dir/dd" bs=1M count="$mib" conv=fsync 2>&1 | tail -n1 | sed 's/^/write /' >>"$out/dd"
	dd if="$dir/dd" of=/dev/null bs=1M iflag=direct 2>&1 | tail -n1 | sed 's/^/read /' >>"$out/dd"
	rm -f "$dir/dd"
done
python3 - "$out" "$mib" "$rounds" "$iters" <<'PY'
import json, re, statistics, sys, os
out, mib, rounds, iters = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
go = {"Save1GiB": [], "Restore1GiB": []}
for line in open(os.path.join(out, "go")):
    m = re.match(r"Benchmark(\w+)-\d+\s+\d+\s+(\d+) ns/op", line)
    go[m.group(1)].append(int(m.group(2)) / 1e9)
jax = {"Save1GiB": [], "Restore1GiB": []}
for line in open(os.path.join(out, "jax")):
    d = json.loads(line)
    for k in jax:
        jax[k].append(d[k]["ns_per_op"] / 1e9)
    versions = "JAX %s, tensorstore %s" % (d["_jax_version"], d["_tensorstore_version"])
rate = {"write": [], "read": []}
for line in open(os.path.join(out, "dd")):
    m = re.match(r"(write|read) .*, ([\d.]+) (GB|MB)/s", line)
    rate[m.group(1)].append(float(m.group(2)) * (1000 if m.group(3) == "GB" else 1))
loads = [l.split()[0] for l in open(os.path.join(out, "load"))]
gib = mib / 1024
print("%d rounds of %s saves and restores each, %g GiB float32 over 8 CPU devices; %s; load at round starts %s." % (
    int(rounds), iters, gib, versions, ", ".join(loads)))
print()
print("| | xlamesh (median s) | JAX (median s) | xlamesh / JAX | xlamesh MB/s | dd MB/s | dd / xlamesh |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for k, d in (("Save1GiB", "write"), ("Restore1GiB", "read")):
    g, j, r = statistics.median(go[k]), statistics.median(jax[k]), statistics.median(rate[d])
    mbs = mib * 1048576 / 1e6 / g
    how = "conv=fsync" if d == "write" else "iflag=direct"
    print("| %s | %.2f | %.2f | %.2f | %.0f | %.0f (dd %s, %s) | %.2f |" % (k, g, j, g / j, mbs, r, d, how, r / mbs))
print()
print("Rounds (s): xlamesh save %s; JAX save %s; xlamesh restore %s; JAX restore %s." % tuple(
    ", ".join("%.2f" % v for v in x) for x in (go["Save1GiB"], jax["Save1GiB"], go["Restore1GiB"], jax["Restore1GiB"])))
PY
