#!/usr/bin/env bash
# Installs what the Bazel build needs into $XLAMESH_CACHE_DIR/bazel (default <repo>/.cache/bazel),
# from the registries this project reaches, so that Bazel itself then works offline:
#
#   debian/   Debian's bazel-bootstrap 4.2.3 and the rule sets the workspace loads (bazel-skylib,
#             bazel-platforms, bazel-rules-cc, bazel-rules-java), plus the protobuf/gRPC
#             libraries its binaries link: `apt-get download` + `dpkg -x`, nothing installed
#             system-wide.
#   gomod/    a Go module cache (through `go env GOPROXY`): rules_go, checked against the sum
#             below, and every module of tools/bazel/go_deps.bzl, checked against its go.sum hash.
#   bin/      gazelle, built with the host Go.
#   go-sdk/   a copy of the host Go SDK with the precompiled standard library and the pack tool
#             that rules_go 0.34 expects (Go stopped shipping them in 1.20).
#   javabase  the path of the JDK the Bazel server runs on.
#
#   tools/bazel/setup.sh [tools|gazelle|modules]   (default: all; `modules` reads go_deps.bzl,
#                                                    `gazelle` is what tools/bazel/gazelle.sh needs)
#
# Idempotent: each part has a stamp naming what it was made from and is skipped when current.
# It fails loudly, with what to install, and never skips a part it needs.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${XLAMESH_CACHE_DIR:-$repo/.cache}
root=$cache/bazel

# Pinned versions. See docs/bazel.md for why these and not newer ones.
BAZEL_DEBS=(bazel-bootstrap=4.2.3+ds-9 bazel-bootstrap-data=4.2.3+ds-9 bazel-skylib=1.0.3-2 bazel-platforms=0.0.2-2
  bazel-rules-cc=0.0.4-2 bazel-rules-java=4.0.0-2)
# The shared libraries bazel-4, process-wrapper and linux-sandbox link (any bookworm version).
LIB_DEBS=(libprotobuf32 libprotoc32 libgrpc++1.51 libgrpc29 libc-ares2 libre2-9 libabsl20220623)
RULES_GO=github.com/bazelbuild/rules_go@v0.34.0
RULES_GO_SUM=h1:cmObMtgIOaEU944SqXtJ9DnlS8IPGGa7pdRnsrpQzXM=
GAZELLE=github.com/bazelbuild/bazel-gazelle/cmd/gazelle@v0.47.0

die() { echo "xlamesh: bazel setup: $*" >&2; exit 1; }
say() { echo "xlamesh: bazel setup: $*"; }
# current NAME KEY: true when part NAME was made from KEY.
current() { [[ -f "$root/.stamp-$1" && "$(cat "$root/.stamp-$1")" == "$2" ]]; }
stamp() { printf '%s' "$2" >"$root/.stamp-$1"; }

mkdir -p "$root"
command -v go >/dev/null || die "go not found; install Go 1.26 (https://go.dev/dl)"
gomod() { env GOMODCACHE="$root/gomod" GOFLAGS=-modcacherw GOPROXY="$(go env GOPROXY)" "$@"; }

# --- Bazel and its rule sets from Debian ---------------------------------------------------------
debian() {
  local key="${BAZEL_DEBS[*]} ${LIB_DEBS[*]} $root"
  current debian "$key" && [[ -x "$root/debian/usr/bin/bazel-4" ]] && return
  command -v apt-get >/dev/null && command -v dpkg >/dev/null \
    || die "apt-get and dpkg not found; Bazel comes from Debian's bazel-bootstrap package (Debian 12 or a derivative)"
  local debs=$root/debs tmp
  mkdir -p "$debs"
  say "downloading ${BAZEL_DEBS[*]} ${LIB_DEBS[*]} with apt-get download"
  # (As root apt warns that its download is unsandboxed: it cannot drop privileges into $debs.)
  (cd "$debs" && apt-get download -q "${BAZEL_DEBS[@]}" "${LIB_DEBS[@]}" 2>&1 | { grep -v '^W: Download is performed unsandboxed' || true; }) \
    || die "apt-get download failed; run \`apt-get update\` (as root) so apt knows bookworm's packages, then retry"
  tmp=$(mktemp -d "$root/debian.XXXXXX")
  local p name f
  for p in "${BAZEL_DEBS[@]}" "${LIB_DEBS[@]}"; do
    name=${p%%=*}
    # the newest file of that package, e.g. bazel-bootstrap_4.2.3+ds-9_amd64.deb
    f=$(ls -t "$debs/${name}_"*.deb | head -n1) || die "no .deb of $name in $debs"
    dpkg -x "$f" "$tmp"
  done
  local missing
  missing=$(LD_LIBRARY_PATH="$tmp/usr/lib/x86_64-linux-gnu" ldd "$tmp/usr/bin/bazel-4" "$tmp"/usr/libexec/x86_64-linux-gnu/bazel/* 2>&1 | grep 'not found' | sort -u || true)
  [[ -z "$missing" ]] || die "Bazel's binaries still miss libraries after unpacking:
$missing"
  # Bazel starts process-wrapper and linux-sandbox with each action's own environment, where
  # LD_LIBRARY_PATH would leak into the action; the loader's --library-path reaches only them.
  local ldso=/lib64/ld-linux-x86-64.so.2 b
  [[ -x "$ldso" ]] || die "$ldso not found; this setup supports x86-64 Linux"
  for b in process-wrapper linux-sandbox; do
    b=$tmp/usr/libexec/x86_64-linux-gnu/bazel/$b
    mv "$b" "$b.bin"
    printf '#!/bin/sh\nexec %s --library-path %s %s "$@"\n' "$ldso" "$root/debian/usr/lib/x86_64-linux-gnu" "$b.bin" \
      | sed "s|$tmp|$root/debian|g" >"$b"
    chmod +x "$b"
  done
  rm -rf "$root/debian"
  mv "$tmp" "$root/debian"
  stamp debian "$key"
}

# --- the JDK the Bazel server runs on (Bazel 4.2 runs on JDK 11 to 17) ---------------------------
javabase() {
  local j v
  for j in "${XLAMESH_BAZEL_JAVABASE:-}" "${JAVA_HOME:-}" /usr/lib/jvm/java-17-openjdk-* /usr/lib/jvm/java-11-openjdk-* \
    "$(dirname "$(dirname "$(readlink -f "$(command -v java 2>/dev/null || echo /nonexistent)")")")"; do
    [[ -n "$j" && -x "$j/bin/java" ]] || continue
    v=$("$j/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1)
    if [[ "$v" =~ ^(11|17)$ ]]; then
      echo "$j" >"$root/javabase"
      return
    fi
  done
  die "no JDK 11 or 17 found for the Bazel 4.2 server; install one (apt-get install openjdk-17-jdk-headless) or set XLAMESH_BAZEL_JAVABASE"
}

# --- Go modules: rules_go, and the project's dependencies named in go_deps.bzl --------------------
modules() {
  local want key
  # "path@version sum" of each go_module(...) of go_deps.bzl, whose sums come from go.sum.
  want=
  if [[ -f "$here/go_deps.bzl" ]]; then
    want=$(sed -n 's/.*importpath = "\([^"]*\)", version = "\([^"]*\)", sum = "\([^"]*\)".*/\1@\2 \3/p' "$here/go_deps.bzl" | sort)
  fi
  want=$(printf '%s\n%s' "$RULES_GO $RULES_GO_SUM" "$want")
  key=$(echo $want)
  current modules "$key" && return
  say "downloading $(echo "$want" | wc -l) Go modules (rules_go and those of go_deps.bzl) through $(go env GOPROXY)"
  local got json
  json=$(mktemp)
  # Outside the module, so that go.sum stays untouched; each sum is compared with the pinned one.
  # A module that fails to download has an "Error" field; the comparison below reports it.
  (cd "$root" && gomod go mod download -json $(echo "$want" | cut -d' ' -f1) >"$json") || true
  got=$(awk -F'"' '/"Path":/ {p=$4} /"Version":/ {v=$4} /"Sum":/ {s=$4} /"Error":/ {s="error: " $4} /^}/ {print p "@" v " " s; s=""}' "$json" | sort)
  rm -f "$json"
  [[ "$got" == "$(echo "$want" | sort)" ]] || die "the Go modules downloaded differ from the pinned ones (< pinned, > downloaded):
$(diff <(echo "$want" | sort) <(echo "$got") || true)"
  stamp modules "$key"
}

# --- gazelle, built with the host Go --------------------------------------------------------------
gazelle() {
  local key="$GAZELLE $(go version)"
  current gazelle "$key" && [[ -x "$root/bin/gazelle" ]] && return
  say "building $GAZELLE with $(go version | cut -d' ' -f3)"
  (cd "$root" && gomod env GOBIN="$root/bin" CGO_ENABLED=0 go install -ldflags='-s -w' "$GAZELLE") || die "could not build $GAZELLE"
  stamp gazelle "$key"
}

# --- the Go SDK: the host Go, plus what rules_go 0.34 reads from pkg/ -----------------------------
gosdk() {
  local goroot key tmp
  goroot=$(go env GOROOT)
  key="$goroot $(go version)"
  current go-sdk "$key" && [[ -f "$root/go-sdk/ROOT" ]] && return
  say "copying the Go SDK at $goroot and compiling its standard library into it"
  tmp=$(mktemp -d "$root/go-sdk.XXXXXX")
  cp -a "$goroot/." "$tmp/"
  chmod -R u+w "$tmp"
  # Go 1.20 and later ship no pkg/$GOOS_$GOARCH/*.a; rules_go 0.34 links against them.
  (cd "$tmp" && env -u GOFLAGS GOROOT="$tmp" GODEBUG=installgoroot=all CGO_ENABLED=1 ./bin/go install std) \
    || die "could not compile the standard library into the SDK copy $tmp"
  (cd "$tmp/src" && env -u GOFLAGS GOROOT="$tmp" ./../bin/go build -o "$tmp/pkg/tool/$(go env GOOS)_$(go env GOARCH)/pack" cmd/pack) \
    || die "could not build the pack tool into the SDK copy $tmp"
  touch "$tmp/ROOT"
  rm -rf "$root/go-sdk"
  mv "$tmp" "$root/go-sdk"
  stamp go-sdk "$key"
}

case "${1:-all}" in
  tools) debian; javabase; gazelle; gosdk ;;
  gazelle) gazelle ;;
  modules) modules ;;
  all) debian; javabase; gazelle; gosdk; modules ;;
  *) die "unknown part \"$1\"; use tools, gazelle, modules or no argument (all)" ;;
esac
say "ready in $root"
