#!/usr/bin/env bash
# The newcomer's path, as a Go user outside this repository walks it: a new module, an empty
# user cache, the README's one-line install, then the README's program. make test runs it.
#
#   tools/newcomer.sh
#
# The module requires github.com/xlamesh/xlamesh through a replace directive pointing at this
# checkout (the same code `go run github.com/xlamesh/xlamesh/cmd/xlamesh@latest` fetches), HOME
# and XDG_CACHE_HOME are fresh directories, and XLAMESH_CACHE_DIR / XLAMESH_PJRT_PLUGIN /
# TF_CPP_MIN_LOG_LEVEL are unset, so the plugin must be downloaded from PyPI into the user cache
# and found there by pjrt.Open() with nothing else set. Go's module and build caches are kept (the
# newcomer has their own; rebuilding the world here would only cost time).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gocache=$(go env GOCACHE) gomodcache=$(go env GOMODCACHE) gopath=$(go env GOPATH)

say() { echo "newcomer: $*"; }
die() { echo "newcomer: FAILED: $*" >&2; exit 1; }

mkdir -p "$work/home" "$work/app"
awk '/<!-- newcomer:/ { grab = 1; next } grab && /^```go/ { inblock = 1; next } inblock && /^```/ { exit } inblock' \
  "$repo/README.md" > "$work/app/main.go"
[[ -s "$work/app/main.go" ]] || die "README.md has no program after its <!-- newcomer: --> marker"
install_line=$(grep -m1 -o 'go run github.com/xlamesh/xlamesh/cmd/xlamesh@latest install-plugin' "$repo/README.md") \
  || die "README.md does not give the install one-liner"

run() {
  env -i PATH="$PATH" HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache" \
    GOCACHE="$gocache" GOMODCACHE="$gomodcache" GOPATH="$gopath" GOFLAGS=-mod=mod GOTOOLCHAIN=local \
    GOPROXY="$(go env GOPROXY)" GONOSUMDB="$(go env GONOSUMDB)" GOSUMDB="$(go env GOSUMDB)" \
    CGO_ENABLED=1 "$@"
}

cd "$work/app"
run go mod init example.com/newcomer >/dev/null 2>&1
run go mod edit -require=github.com/xlamesh/xlamesh@v0.0.0 -replace=github.com/xlamesh/xlamesh="$repo"
run go mod tidy >/dev/null 2>&1 || die "go mod tidy failed in the new module"

# The one-liner, with @latest replaced by the module's own requirement (a replace directive
# cannot serve @latest).
say "${install_line}"
plugin=$(run go run github.com/xlamesh/xlamesh/cmd/xlamesh install-plugin) || die "install-plugin failed"
case "$plugin" in
  "$work/home/.cache/xlamesh/plugins/"*) say "installed into the user cache: ${plugin#"$work/"}" ;;
  *) die "install-plugin put the plugin at $plugin, not in the user cache" ;;
esac

out=$(run go run . 2>"$work/stderr") || { cat "$work/stderr" >&2; die "the README program failed"; }
say "the README program printed: $out"
want="8 devices: [0 2 4 6 8 10 12 14 16 18 20 22 24 26 28 30]"
[[ "$out" == "$want" ]] || die "want \"$want\""
if grep -q '^I[0-9]' "$work/stderr"; then
  cat "$work/stderr" >&2
  die "XLA's info logging reached stderr; it should be quiet by default"
fi
say "ok: installed from PyPI and ran on 8 devices with nothing set"
