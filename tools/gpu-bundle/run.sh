#!/usr/bin/env bash
# run.sh OUT: runs xlamesh's integration suites and a benchmark on this host's GPU, from the
# bundle `make gpu-bundle` builds (no Go toolchain, no network), and writes the Markdown report
# OUT/gpu-report.md (logs beside it in OUT/logs). See docs/gpu.md.
#
# Needs bash, coreutils, xz (to unpack the bundle) and, only to find the plugin, python3. The
# plugin is $XLAMESH_PJRT_PLUGIN when set, else the CUDA plugin of an installed jax-cuda13-pjrt
# or jax-cuda12-pjrt wheel (jax_plugins.xla_cuda13 / xla_cuda12); the CUDA, cuDNN and NCCL
# libraries of the installed nvidia-* wheels are put on LD_LIBRARY_PATH for it.
#
# The mode follows the plugin's platform (bin/xlamesh devices):
#   gpu: every test binary with XLAMESH_TEST_PLATFORM=gpu, the tests named *CPUOnly excluded;
#        then the benchmark, with a trace (bench -trace) into OUT/trace.json.
#   cpu: the CPU mode, the check `make gpu-bundle-check` runs on a CPU machine without Go
#        (XLAMESH_PJRT_PLUGIN = a CPU plugin): the same suites on 8 CPU devices, or on
#        $XLAMESH_TEST_DEVICES to stand in for a host with that many GPUs; the benchmark small
#        and without a trace (the CPU plugins have no profiler extension).
# A skipped test counts as a failure, as in make test-gpu, except one pjrttest.NeedDevices skips
# because the host has fewer devices than its golden needs: those have a column of their own.
# XLAMESH_BUNDLE_RUN, when set, is passed to every binary as -test.run (a reduced set; the
# report says so).
#
# The exit status is 0 when every suite passed and the benchmark ran; the report's path is the
# last line printed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $# -ne 1 ]]; then
  echo "usage: bash run.sh OUTDIR   (XLAMESH_PJRT_PLUGIN=/path/to/plugin.so to choose the plugin)" >&2
  exit 2
fi
mkdir -p "$1/logs" || exit 2
out=$(cd "$1" && pwd)
logs=$out/logs
report=$out/gpu-report.md
t0=$(date +%s)
say() { echo "run.sh: $*" >&2; }

# ---- the plugin ----
site_dirs() {
  python3 -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()] + sys.path))' 2>/dev/null
  ls -d /usr/lib/python3*/site-packages /usr/lib/python3/dist-packages /usr/local/lib/python3*/dist-packages \
    /usr/local/lib/python3*/site-packages "$HOME"/.local/lib/python3*/site-packages 2>/dev/null
}
find_plugin() {
  local mod so d
  for mod in xla_cuda13 xla_cuda12; do
    so=$(python3 -c "import os, jax_plugins.$mod as m; print(os.path.join(os.path.dirname(m.__file__), 'xla_cuda_plugin.so'))" 2>/dev/null)
    if [[ -n $so && -f $so ]]; then echo "$so"; return 0; fi
  done
  while read -r d; do
    for mod in xla_cuda13 xla_cuda12; do
      if [[ -n $d && -f $d/jax_plugins/$mod/xla_cuda_plugin.so ]]; then echo "$d/jax_plugins/$mod/xla_cuda_plugin.so"; return 0; fi
    done
  done < <(site_dirs)
  return 1
}
plugin=${XLAMESH_PJRT_PLUGIN:-}
if [[ -z $plugin ]]; then
  plugin=$(find_plugin) || {
    say "no plugin: install jax-cuda13-pjrt or jax-cuda12-pjrt (pip), or set XLAMESH_PJRT_PLUGIN to a PJRT plugin .so"
    exit 1
  }
fi
export XLAMESH_PJRT_PLUGIN=$plugin
# The CUDA plugin dlopens libcudart, libcublas, libcudnn, libnccl...: from the nvidia-* wheels.
libs=$(while read -r d; do [[ -n $d ]] && ls -d "$d"/nvidia/*/lib 2>/dev/null; done < <(site_dirs) | awk '!seen[$0]++' | paste -sd:)
if [[ -n $libs ]]; then export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
# Nothing of the user's: the tests' compile cache and downloads go under OUT.
export XLAMESH_CACHE_DIR=$out/cache

info=$("$here/bin/xlamesh" devices 2>"$logs/devices.err") || {
  echo >&2
  say "cannot open a client on $plugin: $(tail -n 1 "$logs/devices.err")"
  {
    echo "# xlamesh GPU bundle report"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(uname -n), $(uname -sr)"
    echo "- plugin: $plugin"
    echo "- GPUs: $(nvidia-smi -L 2>/dev/null | paste -sd';' | grep . || echo none)"
    echo "- bundle: $(paste -sd';' "$here/BUILD-INFO")"
    echo "- result: FAILED, no client: \`$(tail -n 1 "$logs/devices.err")\` (logs/devices.err)"
  } >"$report"
  echo "$report"
  exit 1
}
echo "$info" >"$logs/devices.txt"
api=$(awk '$1 == "API" {print $2; exit}' <<<"$info")
platform=$(awk '$1 == "platform" {print $2; exit}' <<<"$info")
ndev=$(awk 'p && NF {n++} /^id +kind/ {p = 1} END {print n + 0}' <<<"$info")
gpus=$(nvidia-smi -L 2>/dev/null || echo "(nvidia-smi: none)")
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
say "plugin $plugin: PJRT C API $api, platform $platform, $ndev devices"
say "nvidia-smi -L: $gpus"
if [[ $platform == cpu ]]; then mode=cpu; else mode=gpu; fi

# ---- the suites ----
# Excluded: the tests of excluded-tests (they need the repository's plugin cache) and the tests
# whose names say they only make sense on the other platform (CPUOnly on a GPU, GPUOnly on CPU).
skip=$(grep -v '^#' "$here/excluded-tests" | grep . | paste -sd'|')
if [[ $mode == gpu ]]; then skip="${skip:+$skip|}CPUOnly\$"; else skip="${skip:+$skip|}GPUOnly"; fi
# Runnable examples print what 8 CPU devices give (device ids, indices, the platform "cpu"):
# they run only in the CPU mode on 8 devices, and the report says so otherwise.
examples="run"
if [[ $mode == gpu || ${XLAMESH_TEST_DEVICES:-8} != 8 ]]; then
  skip="${skip:+$skip|}^Example"
  examples="not run (their // Output: is written for 8 CPU devices)"
fi
# pjrt's TestFakePlugins compiles fake plugins from testdata/fakeplugin/fake.c: only with a C compiler.
if ! command -v "${CC:-cc}" >/dev/null; then skip="${skip:+$skip|}^TestFakePlugins\$"; fi
skip=${skip:-^\$}
runflag=()
if [[ -n ${XLAMESH_BUNDLE_RUN:-} ]]; then runflag=(-test.run "$XLAMESH_BUNDLE_RUN"); fi
# The suites run XLAMESH_BUNDLE_JOBS at a time: by default all at once on a GPU host (one GPU
# shared by a process per suite, each allocating as it goes: XLA_PYTHON_CLIENT_PREALLOCATE=false,
# unless set, as the plugin otherwise takes most of the GPU for its first client), one at a time
# on CPU (make test's 2-core machine). Each suite's time is its own wall time.
if [[ $mode == gpu ]]; then
  export XLA_PYTHON_CLIENT_PREALLOCATE=${XLA_PYTHON_CLIENT_PREALLOCATE:-false}
  jobs=${XLAMESH_BUNDLE_JOBS:-$(wc -l <"$here/PACKAGES")}
else
  jobs=${XLAMESH_BUNDLE_JOBS:-1}
fi
run_suite() { # rel name: runs one test binary, its log in logs/name.log, exit status and seconds in logs/name.rc
  local s rc
  s=$(date +%s)
  (cd "$here/src/$1" && XLAMESH_TEST_PLATFORM=$mode "$here/bin/$2.test" -test.v -test.count=1 \
    -test.timeout="${XLAMESH_BUNDLE_TIMEOUT:-600s}" -test.skip "$skip" "${runflag[@]}" >"$logs/$2.log" 2>&1)
  rc=$?
  echo "$rc $(($(date +%s) - s))" >"$logs/$2.rc"
}
mapfile -t packages <"$here/PACKAGES"
say "running ${#packages[@]} suites, $jobs at a time"
running=0
for rel in "${packages[@]}"; do
  if ((running >= jobs)); then
    wait -n
    running=$((running - 1))
  fi
  name=$(echo "$rel" | tr / _)
  say "testing $rel"
  run_suite "$rel" "$name" &
  running=$((running + 1))
done
wait
rows=()
failed=0
for rel in "${packages[@]}"; do
  name=$(echo "$rel" | tr / _)
  log=$logs/$name.log
  read -r rc secs <"$logs/$name.rc" || { rc=1; secs=0; }
  pass=$(grep -c '^--- PASS' "$log")
  fail=$(grep -c '^--- FAIL' "$log")
  # Tests (and subtests) skipped by pjrttest.NeedDevices need more devices than this host has: they
  # are counted apart, never as passes; any other skip is a failure.
  needs=$(grep -cE '^ +[^ ]+\.go:[0-9]+: pjrttest: needs [0-9]+ devices;' "$log")
  skipped=$(($(grep -cE '^ *--- SKIP' "$log") - needs))
  first=""
  if ((rc != 0 || fail > 0 || skipped > 0)); then
    failed=1
    first=$(grep -m1 -E '^ *--- FAIL' "$log" ||
      awk 'skip && !/pjrttest: needs [0-9]+ devices;/ {print skip; exit} {skip = ""} /^ *--- SKIP/ {skip = $0}' "$log")
    if [[ -n $first ]]; then
      t=$(awk '{print $3}' <<<"$first")
      detail=$(awk -v t="$t" '$0 == "=== RUN   "t {p = 1; next} p && index($0, "--- ") == 1 {exit} p && !/^=== /' "$log" | grep -m1 -A4 -E '\.go:[0-9]+:')
    else
      first="exit status $rc"
      detail=$(tail -n 8 "$log")
    fi
    first="$first<br>\`$(echo "$detail" | tr -s ' \t' ' ' | tr '\n' ' ' | sed 's/`/'"'"'/g' | cut -c1-400)\`"
    status=FAILED
  else
    status=passed
  fi
  rows+=("| $rel | $status | $pass | $fail | $skipped | $needs | $secs s | $first |")
  say "$rel: $status ($pass passed, $fail failed, $skipped skipped, $needs need more devices)"
done

# ---- the benchmark ----
trace=()
if [[ $mode == gpu ]]; then
  bargs=(-kernel matmul -n 4096 -iters 10 -what sweep,chain,transfer -chain 200 -mib 256)
  trace=(-trace "$out/trace.json")
else
  bargs=(-kernel matmul -n 256 -iters 3 -what sweep,chain,transfer -chain 50 -mib 8)
fi
say "benchmark: xlamesh bench ${bargs[*]} ${trace[*]}"
bench_ok=1
trace_note=""
if ! "$here/bin/xlamesh" bench "${bargs[@]}" "${trace[@]}" -q >"$out/bench.txt" 2>"$logs/bench.err"; then
  if [[ ${#trace[@]} -gt 0 ]]; then
    # The trace failed (or the benchmark did): the figures once more without it, and the report
    # says why there is no trace.
    trace_note="no trace: $(tail -n 1 "$logs/bench.err")"
    failed=1
    trace=()
    say "benchmark with -trace failed ($trace_note); again without it"
    "$here/bin/xlamesh" bench "${bargs[@]}" -q >"$out/bench.txt" 2>>"$logs/bench.err" || bench_ok=0
  else
    bench_ok=0
  fi
  [[ $bench_ok == 1 ]] || failed=1
fi

# ---- beside JAX ----
# The same figures from JAX on this host (jax_bench.py), in turns with xlamesh bench -format json,
# when python3 has jax (GPU hosts usually do; the CPU check's python3 need not): the report puts
# them side by side (bench_compare.py). Informational: it never fails the run.
# XLAMESH_BUNDLE_VS_JAX=0 leaves it out (a rerun short of time).
vsjax="not run: python3 has no jax"
if [[ ${XLAMESH_BUNDLE_VS_JAX:-1} == 0 ]]; then
  vsjax="not run: XLAMESH_BUNDLE_VS_JAX=0"
elif [[ $bench_ok == 1 ]] && python3 -c 'import jax' 2>/dev/null; then
  n=${bargs[3]} iters=${bargs[5]} chainlen=${bargs[9]} mib=${bargs[11]}
  xl=() jx=()
  for k in 1 2 3; do
    say "beside JAX, round $k of 3"
    "$here/bin/xlamesh" bench "${bargs[@]}" -q -format json >"$logs/bench-$k.json" 2>>"$logs/bench.err" && xl+=("$logs/bench-$k.json")
    python3 "$here/jax_bench.py" "$n" "$iters" "$chainlen" "$mib" >"$logs/jax-$k.txt" 2>>"$logs/jax.err" && jx+=("$logs/jax-$k.txt")
  done
  if ((${#xl[@]} > 0 && ${#jx[@]} > 0)); then
    vsjax=$(python3 "$here/bench_compare.py" "${xl[@]}" -- "${jx[@]}" 2>>"$logs/jax.err") || vsjax="FAILED: $(tail -n 1 "$logs/jax.err")"
  else
    vsjax="FAILED: $(tail -n 1 "$logs/jax.err" "$logs/bench.err" | paste -sd' ')"
  fi
fi

# ---- the report ----
{
  echo "# xlamesh GPU bundle report"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ), host $(uname -n), $(uname -sr)"
  echo "- mode: $mode (XLAMESH_TEST_PLATFORM=$mode${XLAMESH_TEST_DEVICES:+, XLAMESH_TEST_DEVICES=$XLAMESH_TEST_DEVICES}${XLAMESH_BUNDLE_RUN:+, reduced set -test.run '$XLAMESH_BUNDLE_RUN'}; excluded: -test.skip '$skip')"
  echo "- runnable examples: $examples"
  echo "- plugin: $plugin, PJRT C API $api, platform $(awk '$1 == "platform" {$1 = ""; print substr($0, 2); exit}' <<<"$info"), $ndev devices"
  echo "- GPUs: $(echo "$gpus" | paste -sd';')"
  echo "- driver: ${driver:-none}"
  echo "- bundle: $(paste -sd';' "$here/BUILD-INFO")"
  echo "- wall time: $(($(date +%s) - t0)) s"
  echo "- result: $([[ $failed == 0 ]] && echo 'every suite passed' || echo FAILED)"
  echo
  echo "## Suites"
  echo
  echo "| package | status | passed | failed | skipped | needs more devices | time | first failure |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "## Benchmark"
  echo
  echo "\`xlamesh bench ${bargs[*]} ${trace[*]}\`$([[ $bench_ok == 1 ]] || echo ': FAILED')"
  echo
  echo '```'
  cat "$out/bench.txt"
  [[ $bench_ok == 1 ]] || cat "$logs/bench.err"
  echo '```'
  echo
  echo "### Beside JAX"
  echo
  echo "$vsjax"
  if [[ -n $trace_note ]]; then
    echo
    echo "Trace: FAILED, $trace_note"
  fi
  if [[ ${#trace[@]} -gt 0 && -f $out/trace.json ]]; then
    echo
    echo "Trace: trace.json ($(stat -c %s "$out/trace.json") bytes), open it in https://ui.perfetto.dev"
  fi
} >"$report"
say "wall time $(($(date +%s) - t0)) s; $([[ $failed == 0 ]] && echo 'every suite passed' || echo 'FAILURES, see the report')"
echo "$report"
exit $failed
