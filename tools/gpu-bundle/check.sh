#!/usr/bin/env bash
# make gpu-bundle-check: the bundle of `make gpu-bundle`, unpacked into an empty temporary
# directory and run there in its CPU mode, as a GPU host would run it but on the pinned CPU
# plugin and with no `go` on PATH, so that a test binary needing the toolchain or a file the
# bundle lacks fails here first. Usage: check.sh CPU_PLUGIN_PATH.
#
# XLAMESH_BUNDLE_RUN (a -test.run pattern) passes through to run.sh; `make test` sets it to the
# reduced set of tools/gpu-bundle/ci-tests (see docs/gpu.md), `make gpu-bundle-check` runs all.
# BUNDLE_DEVICES (default "8 1") lists the CPU device counts run.sh runs on, once each, through
# XLAMESH_TEST_DEVICES: 1 stands in for a host with one GPU, so that a test that does not follow
# the client's device count fails here.
set -euo pipefail
plugin=${1:?usage: check.sh CPU_PLUGIN_PATH}
cache=${XLAMESH_CACHE_DIR:?}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
tar -C "$dir" -xJf "${XLAMESH_GPU_BUNDLE:-$cache/gpu-bundle.tar.xz}"
path=""
IFS=: read -ra parts <<<"$PATH"
for p in "${parts[@]}"; do
  if [[ -n $p && ! -x $p/go ]]; then path=${path:+$path:}$p; fi
done
mkdir "$dir/empty"
cd "$dir/empty"
rc=0
for n in ${BUNDLE_DEVICES:-8 1}; do
  out=$dir/out-$n
  mkdir "$out"
  r=0
  env -u XLAMESH_CACHE_DIR -u XLAMESH_TEST_PLATFORM PATH="$path" XLAMESH_PJRT_PLUGIN="$plugin" XLAMESH_TEST_DEVICES="$n" \
    bash "$dir/xlamesh-gpu-bundle/run.sh" "$out" || r=$?
  echo "==== the bundle on $n CPU devices"
  cat "$out/gpu-report.md"
  if ((r != 0)); then
    rc=$r
    for f in "$out"/logs/*.log; do
      if grep -qE '^ *--- FAIL|^FAIL|^ *--- SKIP' "$f"; then echo "---- $f"; grep -E -B2 -A12 '^ *--- (FAIL|SKIP)' "$f" | head -60; fi
    done
  fi
done
exit $rc
