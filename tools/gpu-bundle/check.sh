#!/usr/bin/env bash
# make gpu-bundle-check: the bundle of `make gpu-bundle`, unpacked into an empty temporary
# directory and run there in its CPU mode, as a GPU host would run it but on the pinned CPU
# plugin and with no `go` on PATH, so that a test binary needing the toolchain or a file the
# bundle lacks fails here first. Usage: check.sh CPU_PLUGIN_PATH.
#
# XLAMESH_BUNDLE_RUN (a -test.run pattern) passes through to run.sh; `make test` sets it to the
# reduced set of tools/gpu-bundle/ci-tests (see docs/gpu.md), `make gpu-bundle-check` runs all.
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
mkdir "$dir/empty" "$dir/out"
cd "$dir/empty"
rc=0
env -u XLAMESH_CACHE_DIR -u XLAMESH_TEST_PLATFORM PATH="$path" XLAMESH_PJRT_PLUGIN="$plugin" \
  bash "$dir/xlamesh-gpu-bundle/run.sh" "$dir/out" || rc=$?
cat "$dir/out/gpu-report.md"
if ((rc != 0)); then
  for f in "$dir"/out/logs/*.log; do
    if grep -qE '^--- (FAIL|SKIP)|^FAIL' "$f"; then echo "---- $f"; grep -E -B2 -A12 '^--- (FAIL|SKIP)' "$f" | head -60; fi
  done
fi
exit $rc
