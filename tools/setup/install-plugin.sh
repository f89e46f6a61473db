#!/usr/bin/env bash
# Installs pinned PJRT plugins from their PyPI wheels into the project cache.
#
#   tools/setup/install-plugin.sh                # the default plugin: the first line of plugin.lock
#   tools/setup/install-plugin.sh NAME...        # the plugins plugin.lock names NAME
#   tools/setup/install-plugin.sh --path NAME    # print where NAME is installed; install nothing
#
# For each plugin: pip downloads the wheel (--require-hashes), the script checks its sha256 again,
# unpacks the .so into $XLAMESH_CACHE_DIR/plugins/NAME-VERSION/ (default <repo>/.cache) and
# compares the PJRT C API version the .so reports with the lock. The .so is loaded to read that
# version, never asked for a client, so a GPU plugin installs on a machine without a GPU.
#
# Idempotent: an installed plugin whose stamp matches the lock returns at once.
# It fails loudly (non-zero exit, a message saying what is missing) and never skips.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${XLAMESH_CACHE_DIR:-$repo/.cache}
lockfile="$here/plugin.lock"
platform=manylinux_2_27_x86_64

die() { echo "xlamesh: install-plugin: $*" >&2; exit 1; }

# names prints the plugin names of the lock, the default first.
names() { awk '!/^#/ && NF { print $1 }' "$lockfile"; }

# entry NAME sets name, version, sha256, so_path, api_version and so (the installed file) from the lock.
entry() {
  local line
  line=$(awk -v n="$1" '!/^#/ && $1 == n' "$lockfile")
  [[ -n "$line" ]] || die "no plugin \"$1\" in $lockfile (it has: $(names | paste -sd ' '))"
  read -r name version sha256 so_path api_version <<<"$line"
  [[ -n "$api_version" ]] || die "$lockfile: the line of $name has fewer than 5 fields"
  so="$cache/plugins/$name-$version/$(basename "$so_path")"
}

install() {
  entry "$1"
  local dest stamp tmp whl got got_api
  dest=$(dirname "$so")
  stamp="$dest/.installed-sha256"
  if [[ -f "$so" && -f "$stamp" && "$(cat "$stamp")" == "$sha256" ]]; then
    echo "xlamesh: PJRT plugin $name $version already installed: $so"
    return
  fi
  command -v python3 >/dev/null || die "python3 not found; install Python 3 with pip to fetch the $name==$version wheel"
  python3 -m pip --version >/dev/null 2>&1 || die "pip not found for python3; install it (apt-get install python3-pip)"

  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  printf '%s==%s --hash=sha256:%s\n' "$name" "$version" "$sha256" >"$tmp/req.txt"
  echo "xlamesh: downloading $name==$version (pinned sha256 ${sha256:0:12}…)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
    --platform "$platform" -r "$tmp/req.txt" -d "$tmp/whl" \
    || die "pip could not download $name==$version with sha256 $sha256"
  whl=$(ls "$tmp"/whl/*.whl 2>/dev/null | head -n1)
  [[ -n "$whl" ]] || die "pip produced no wheel for $name==$version"
  got=$(sha256sum "$whl" | cut -d' ' -f1)
  [[ "$got" == "$sha256" ]] || die "wheel $whl has sha256 $got, want $sha256"

  python3 - "$whl" "$so_path" "$tmp/so" <<'PY' || die "wheel of $name==$version has no $so_path"
import sys, zipfile, shutil
whl, member, out = sys.argv[1:]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst)
PY

  # PJRT_Api starts with struct_size and extension_start (8 bytes each), then PJRT_Api_Version:
  # struct_size, extension_start, major_version, minor_version (int).
  got_api=$(python3 - "$tmp/so" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.GetPjrtApi.restype = ctypes.c_void_p
api = lib.GetPjrtApi()
print("%d.%d" % (ctypes.c_int.from_address(api + 32).value, ctypes.c_int.from_address(api + 36).value))
PY
  ) || die "could not read the PJRT API version of $so_path from $name==$version"
  [[ "$got_api" == "$api_version" ]] || die "$name==$version reports PJRT C API $got_api, want $api_version"

  mkdir -p "$dest"
  mv -f "$tmp/so" "$so"
  echo "$sha256" >"$stamp"
  rm -rf "$tmp"
  trap - EXIT
  echo "xlamesh: installed PJRT plugin $name $version (PJRT C API $got_api): $so"
}

[[ -f "$lockfile" ]] || die "$lockfile is missing"
if [[ "${1:-}" == "--path" ]]; then
  [[ $# -eq 2 ]] || die "usage: $0 --path NAME"
  entry "$2"
  echo "$so"
  exit 0
fi
if [[ $# -eq 0 ]]; then
  set -- "$(names | head -n1)"
fi
for n in "$@"; do
  install "$n"
done
