#!/usr/bin/env bash
# Installs the pinned gremlins (github.com/go-gremlins/gremlins, a mutation tester for Go) into the
# project cache and prints its path; `make mutation` and `make mutation-diff` use it.
#
#   tools/setup/gremlins.sh       # into $XLAMESH_CACHE_DIR/bin or <repo>/.cache/bin
#
# The version is pinned here: v0.6.0, the newest release on the Go module proxy; it builds with
# Go 1.26 (checked with `GOFLAGS=-mod=mod go install ...@v0.6.0`). Its `--version` prints "dev"
# for a `go install` build, so the pin is checked against the module version recorded in the
# binary (`go version -m`). `go install` fetches it through the Go module proxy and checks it
# against the checksum database. Idempotent; fails loudly and never skips.
set -euo pipefail

version=v0.6.0
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${XLAMESH_CACHE_DIR:-$repo/.cache}
bin="$cache/bin"
exe="$bin/gremlins"

pinned() { go version -m "$exe" 2>/dev/null | grep -qE "^\s+mod\s+github.com/go-gremlins/gremlins\s+$version\s"; }

die() { echo "xlamesh: gremlins: $*" >&2; exit 1; }
command -v go >/dev/null || die "go not found; install Go 1.26 to build gremlins"
if [[ -x "$exe" ]] && pinned; then
  echo "$exe"
  exit 0
fi
mkdir -p "$bin"
# With @version, go install builds gremlins on its own module graph, not xlamesh's go.mod.
GOBIN="$bin" GOFLAGS=-mod=mod go install "github.com/go-gremlins/gremlins/cmd/gremlins@$version" >&2 \
  || die "go install github.com/go-gremlins/gremlins/cmd/gremlins@$version failed (is the Go module proxy reachable?)"
pinned || die "$exe is not gremlins $version"
echo "xlamesh: installed gremlins $version: $exe" >&2
echo "$exe"
