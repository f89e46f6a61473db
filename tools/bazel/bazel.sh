#!/usr/bin/env bash
# Runs the Bazel that tools/bazel/setup.sh unpacked into $XLAMESH_CACHE_DIR/bazel (Debian's
# bazel-bootstrap 4.2.3), with its output, install base and JDK there too:
#
#   tools/bazel/bazel.sh build //...
#   tools/bazel/bazel.sh test //pjrt:pjrt_test
#   tools/bazel/bazel.sh shutdown
#
# XLAMESH_CACHE_DIR is exported (absolute) so that repository rules and tests (--test_env in
# .bazelrc) find the cache. On a shared machine the server keeps to XLAMESH_BAZEL_MAX_HEAP of
# Java heap (default 2g) and exits after XLAMESH_BAZEL_MAX_IDLE seconds unused (default 1800).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
export XLAMESH_CACHE_DIR=${XLAMESH_CACHE_DIR:-$repo/.cache}
XLAMESH_CACHE_DIR=$(cd "$XLAMESH_CACHE_DIR" 2>/dev/null && pwd) \
  || { echo "xlamesh: bazel: $XLAMESH_CACHE_DIR does not exist; run tools/bazel/setup.sh" >&2; exit 1; }
root=$XLAMESH_CACHE_DIR/bazel
deb=$root/debian
[[ -x "$deb/usr/bin/bazel-4" && -f "$root/javabase" ]] \
  || { echo "xlamesh: bazel: Bazel is not installed in $root; run tools/bazel/setup.sh" >&2; exit 1; }

# The repositories of tools/bazel/repos.bzl are made again when this changes: a hash of the
# stamps of what setup.sh installed.
XLAMESH_BAZEL_TOOLS=$({ cat "$root"/.stamp-debian "$root"/.stamp-gazelle "$root"/.stamp-go-sdk 2>/dev/null || true; } | sha256sum | cut -c1-16)
export XLAMESH_BAZEL_TOOLS

# bazel-4, process-wrapper and linux-sandbox link Debian's protobuf and gRPC libraries.
export LD_LIBRARY_PATH=$deb/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
exec "$deb/usr/bin/bazel-4" \
  --nosystem_rc --nohome_rc \
  --install_base="$deb/usr/share/bazel" --trust_install_base \
  --output_user_root="$root/output" \
  --server_javabase="$(cat "$root/javabase")" \
  --host_jvm_args=-Xmx"${XLAMESH_BAZEL_MAX_HEAP:-2g}" \
  --max_idle_secs="${XLAMESH_BAZEL_MAX_IDLE:-1800}" \
  "$@"
