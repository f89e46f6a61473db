#!/usr/bin/env bash
# Installs a test fixture into the project cache and prints its directory: Debian's ILP64
# OpenBLAS (libopenblas64-0-pthread, LAPACK and BLAS with 64-bit integers under the usual
# names, dpotrf_, idamax_, ...) and the libgfortran it needs, unpacked from their .deb files.
#
#   tools/setup/ilp64-lapack.sh     # into $XLAMESH_CACHE_DIR/fixtures or <repo>/.cache/fixtures
#
# xlamesh's LAPACK kernels call LAPACK with 32-bit integers, as jaxlib does; such a library
# under XLAMESH_LAPACK would read every size wrong. package pjrt refuses it at load, and its test
# (TestLAPACKILP64CPUOnly) proves that on this real library. The packages are Debian 12's,
# fetched with `apt-get download` (no root needed) and checked against the sha256 pinned here;
# dpkg-deb unpacks them. Idempotent; fails loudly, never skips.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${XLAMESH_CACHE_DIR:-$repo/.cache}
dir="$cache/fixtures/openblas64-0.3.21"
lib="$dir/usr/lib/x86_64-linux-gnu/openblas64-pthread/libopenblas64.so.0"
if [[ -f "$lib" && -f "$dir/.complete" ]]; then
  echo "$dir"
  exit 0
fi

die() { echo "xlamesh: ilp64-lapack: $*" >&2; exit 1; }
command -v apt-get >/dev/null || die "apt-get not found: this fixture comes from Debian packages"
command -v dpkg-deb >/dev/null || die "dpkg-deb not found: this fixture comes from Debian packages"
pkgs=(
  "libopenblas64-0-pthread=0.3.21+ds-4 2e3043fa939d857699b85b6dc5253734cb41f380f06e2ca4719ca85f9a041503"
  "libgfortran5=12.2.0-14+deb12u1 63d38775d20c425c1f00914b52167ae0e3b4639facdb0aa734877279fb716fbb"
)
tmp=$(mktemp -d)
chmod 755 "$tmp" # apt-get download hands the file to its _apt user
trap 'rm -rf "$tmp"' EXIT
rm -rf "$dir"
mkdir -p "$dir"
for p in "${pkgs[@]}"; do
  spec=${p% *}
  sum=${p#* }
  (cd "$tmp" && apt-get download "$spec" >&2) || die "apt-get download $spec failed (is a Debian 12 mirror reachable?)"
  deb=$(ls "$tmp"/"${spec%%=*}"_*.deb)
  echo "$sum  $deb" | sha256sum -c --quiet - >&2 || die "$deb: sha256 is not the pinned $sum"
  dpkg-deb -x "$deb" "$dir" || die "dpkg-deb -x $deb failed"
  rm -f "$deb"
done
[[ -f "$lib" ]] || die "$lib is missing from the packages"
touch "$dir/.complete"
echo "$dir"
