#!/usr/bin/env bash
# Installs the pinned XLA CPU PJRT plugin from its PyPI wheel into the project cache.
#
#   tools/setup/install-plugin.sh            # into $XLAMESH_CACHE_DIR or <repo>/.cache
#
# Idempotent: a second run checks the installed file's stamp and returns at once.
# It fails loudly (non-zero exit, a message saying what is missing) and never skips.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${XLAMESH_CACHE_DIR:-$repo/.cache}

lock() { sed -n "s/^$1=//p" "$here/plugin.lock"; }
requirement=$(lock requirement); sha256=$(lock sha256); so_path=$(lock so_path); api_version=$(lock api_version)
name=${requirement%%==*}
version=${requirement##*==}
dest="$cache/plugins/$name-$version"
so="$dest/$(basename "$so_path")"
stamp="$dest/.installed-sha256"

if [[ -f "$so" && -f "$stamp" && "$(cat "$stamp")" == "$sha256" ]]; then
  echo "xlamesh: CPU PJRT plugin already installed: $so"
  exit 0
fi

die() { echo "xlamesh: install-plugin: $*" >&2; exit 1; }
command -v python3 >/dev/null || die "python3 not found; install Python 3 with pip to fetch the $requirement wheel"
python3 -m pip --version >/dev/null 2>&1 || die "pip not found for python3; install it (apt-get install python3-pip)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s --hash=sha256:%s\n' "$requirement" "$sha256" >"$tmp/req.txt"
echo "xlamesh: downloading $requirement (pinned sha256 ${sha256:0:12}…)"
python3 -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
  --platform manylinux_2_27_x86_64 -r "$tmp/req.txt" -d "$tmp/whl" \
  || die "pip could not download $requirement with sha256 $sha256"
whl=$(ls "$tmp"/whl/*.whl 2>/dev/null | head -n1)
[[ -n "$whl" ]] || die "pip produced no wheel for $requirement"
got=$(sha256sum "$whl" | cut -d' ' -f1)
[[ "$got" == "$sha256" ]] || die "wheel $whl has sha256 $got, want $sha256"

python3 - "$whl" "$so_path" "$tmp/so" <<'PY' || die "wheel has no $so_path"
import sys, zipfile, shutil, os
whl, member, out = sys.argv[1:]
with zipfile.ZipFile(whl) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst)
PY

# The plugin must report the PJRT C API version gopjrt v0.10.0 speaks.
got_api=$(python3 - "$tmp/so" <<'PY'
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.GetPjrtApi.restype = ctypes.c_void_p
api = lib.GetPjrtApi()
print("%d.%d" % (ctypes.c_int.from_address(api + 32).value, ctypes.c_int.from_address(api + 36).value))
PY
) || die "could not read the PJRT API version of $so_path"
[[ "$got_api" == "$api_version" ]] || die "$requirement reports PJRT C API $got_api, want $api_version"

mkdir -p "$dest"
mv -f "$tmp/so" "$so"
echo "$sha256" >"$stamp"
echo "xlamesh: installed CPU PJRT plugin (PJRT C API $got_api): $so"
