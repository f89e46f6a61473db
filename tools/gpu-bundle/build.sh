#!/usr/bin/env bash
# make gpu-bundle: builds, on this CPU machine, $XLAMESH_CACHE_DIR/gpu-bundle.tar.xz, everything
# a GPU host without Go needs to run xlamesh's integration suites on its GPU (see docs/gpu.md):
#
#   xlamesh-gpu-bundle/run.sh          the entry script (tools/gpu-bundle/run.sh)
#   xlamesh-gpu-bundle/bin/xlamesh     the CLI; run.sh uses `devices` and `bench` (the benchmark)
#   xlamesh-gpu-bundle/bin/*.test      one stripped test binary per integration package
#   xlamesh-gpu-bundle/src/...         the files the tests read, at their paths in the repository
#                                      (each binary runs in its package's directory there)
#   xlamesh-gpu-bundle/jax_bench.py    the benchmark's JAX counterpart, and bench_compare.py,
#                                      which puts the two side by side (GPU mode, with jax)
#   xlamesh-gpu-bundle/BUILD-INFO      the commit and Go version it was built from
#
# Usage: build.sh PACKAGE... (the Makefile passes $(INTEGRATION)). Fails, with the size, when
# the archive is over 40 MiB: it travels to a GPU host beside a checkout of about 21 MiB, and
# such a transfer is often capped at 64 MiB.
#
# xz runs at -9 on one thread: its one 64 MiB dictionary spans the test binaries, which share
# most of their code, so the archive is half what -6 in parallel blocks makes (24 against 46
# MiB, 2026-11-28), for about 90 s of compression. XLAMESH_GPU_BUNDLE_XZ sets other xz options
# for a bundle that only checks itself here (make test's gpu-bundle-ci: the same files, sooner);
# the size limit is then not applied.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
GO=${GO:-go}
limit=$((40 << 20))
xz_opts=${XLAMESH_GPU_BUNDLE_XZ:--9 -T1}
cache=${XLAMESH_CACHE_DIR:-$PWD/.cache}
out=${XLAMESH_GPU_BUNDLE:-$cache/gpu-bundle.tar.xz} # XLAMESH_GPU_BUNDLE: another place for it
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
b=$stage/xlamesh-gpu-bundle
mkdir -p "$b/bin" "$b/src"

ldflags='-s -w'
"$GO" build -ldflags="$ldflags" -o "$b/bin/xlamesh" ./cmd/xlamesh
pkgs=$("$GO" list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' "$@")
mod=$("$GO" list -m)
for pkg in $pkgs; do
  rel=${pkg#"$mod"}
  rel=${rel#/}
  rel=${rel:-.}
  name=$(echo "$rel" | tr / _)
  "$GO" test -c -ldflags="$ldflags" -o "$b/bin/$name.test" "./$rel"
  mkdir -p "$b/src/$rel"
  if [[ -d $rel/testdata ]]; then cp -r "$rel/testdata" "$b/src/$rel/"; fi
  echo "$rel" >>"$b/PACKAGES"
done
# Files the tests read outside their own testdata: the JAX goldens (jit, internal/oracletest)
# and the C sources pjrt's tests fingerprint and compile against.
mkdir -p "$b/src/testdata"
cp -r testdata/oracle "$b/src/testdata/"
# Read only by TestLinalgCPUOnly, which the bundle does not run (excluded-tests).
rm -f "$b/src/testdata/oracle/linalg.json"
cp -r cc "$b/src/cc"
rm -f "$b/src/cc/BUILD.bazel"
cp tools/gpu-bundle/run.sh "$b/run.sh"
cp tools/gpu-bundle/excluded-tests "$b/excluded-tests"
cp tools/gpu-bundle/jax_bench.py tools/gpu-bundle/bench_compare.py "$b/"
chmod +x "$b/run.sh"
{
  echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "go $("$GO" env GOVERSION) $("$GO" env GOOS)/$("$GO" env GOARCH)"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} >"$b/BUILD-INFO"

mkdir -p "$cache"
# shellcheck disable=SC2086 # xz_opts is a list of options
tar -C "$stage" -cf - xlamesh-gpu-bundle | xz $xz_opts >"$out.tmp"
size=$(stat -c %s "$out.tmp")
mib=$(awk -v s="$size" 'BEGIN{printf "%.1f", s/1048576}')
if [[ -n ${XLAMESH_GPU_BUNDLE_XZ:-} ]]; then
  mv "$out.tmp" "$out"
  echo "make gpu-bundle: $out, $size bytes ($mib MiB with xz $xz_opts: a bundle to check here, not to carry), $(wc -l <"$b/PACKAGES") test binaries"
  exit 0
fi
if ((size > limit)); then
  rm -f "$out.tmp"
  echo "make gpu-bundle: the archive is $size bytes ($((size >> 20)) MiB), over the limit of $limit bytes (40 MiB)" >&2
  exit 1
fi
mv "$out.tmp" "$out"
echo "make gpu-bundle: $out, $size bytes ($mib MiB of 40), $(wc -l <"$b/PACKAGES") test binaries"
