#!/usr/bin/env bash
# `make bazel`: builds and tests every package with Bazel, offline once the cache is filled.
#
#   1. tools/bazel/setup.sh tools   Bazel, its rule sets, gazelle and the Go SDK into the cache
#   2. tools/bazel/gazelle.sh check the committed BUILD.bazel files and go_deps.bzl are current
#   3. tools/bazel/setup.sh modules the Go modules go_deps.bzl names
#   4. bazel build //... and bazel test //... (tests find the PJRT plugins through
#      $XLAMESH_CACHE_DIR, which `make setup` filled; .bazelrc passes it on)
#   5. tools/testreport over the test logs: per package the tests passed, failed and skipped,
#      and the plugin each integration package opened; a failure or a skip fails the run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
export XLAMESH_CACHE_DIR=${XLAMESH_CACHE_DIR:-$repo/.cache}
mkdir -p "$XLAMESH_CACHE_DIR"
XLAMESH_CACHE_DIR=$(cd "$XLAMESH_CACHE_DIR" && pwd)
cd "$repo"

bash "$here/setup.sh" tools
bash "$here/gazelle.sh" check
bash "$here/setup.sh" modules

bazel=("$here/bazel.sh")
"${bazel[@]}" build //...
rc=0
# Tests named *GPUOnly* are for XLAMESH_TEST_PLATFORM=gpu only; on CPU they are not run, as in make unit.
"${bazel[@]}" test --test_arg=-test.skip=GPUOnly //... || rc=$?
# 3: some test failed; 4: no test target. Anything else is a build error, reported by Bazel.
[[ $rc == 0 || $rc == 3 ]] || exit $rc

# The test binaries ran with -test.v=test2json (.bazelrc): their logs become `go test -json`.
logs=$("${bazel[@]}" info bazel-testlogs 2>/dev/null)
prefix=$(sed -n 's/^module //p' go.mod)
{
  echo "testreport-pass: bazel test //..."
  "${bazel[@]}" query 'tests(//...)' 2>/dev/null | sort | while read -r label; do
    pkg=${label#//}
    pkg=${pkg%%:*}
    log=$logs/$pkg/${label##*:}/test.log
    [[ -f "$log" ]] || { echo "xlamesh: bazel: no test log for $label at $log" >&2; continue; }
    go tool test2json -p "$prefix/$pkg" <"$log"
  done
} | go run ./tools/testreport || rc=1
exit $rc
