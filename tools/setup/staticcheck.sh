#!/usr/bin/env bash
# Installs the pinned staticcheck (honnef.co/go/tools) into the project cache and prints its path.
#
#   tools/setup/staticcheck.sh       # into $XLAMESH_CACHE_DIR/bin or <repo>/.cache/bin
#
# The version is pinned here: 0.8.2 (2026.2.2) is the release that knows Go 1.26. `go install`
# fetches it through the Go module proxy and checks it against the checksum database.
# Idempotent: a second run finds the binary reporting the pinned version and returns at once.
# It fails loudly (non-zero exit, a message saying what is missing) and never skips.
set -euo pipefail

version=v0.8.2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${XLAMESH_CACHE_DIR:-$repo/.cache}
bin="$cache/bin"
exe="$bin/staticcheck"

if [[ -x "$exe" ]] && "$exe" -version 2>/dev/null | grep -q "(${version#v})"; then
  echo "$exe"
  exit 0
fi

die() { echo "xlamesh: staticcheck: $*" >&2; exit 1; }
command -v go >/dev/null || die "go not found; install Go 1.26 to build staticcheck"
mkdir -p "$bin"
# With @version, go install builds staticcheck on its own module graph, not xlamesh's go.mod.
GOBIN="$bin" go install "honnef.co/go/tools/cmd/staticcheck@$version" >&2 \
  || die "go install honnef.co/go/tools/cmd/staticcheck@$version failed (is the Go module proxy reachable?)"
"$exe" -version 2>/dev/null | grep -q "(${version#v})" || die "$exe does not report version ${version#v}"
echo "xlamesh: installed staticcheck ${version#v}: $exe" >&2
echo "$exe"
