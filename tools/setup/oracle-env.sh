#!/usr/bin/env bash
# Creates the oracle's Python venv (JAX 0.12 on CPU) in <repo>/.cache/oracle-venv.
# JAX 0.12 needs Python >= 3.12: the venv is made from pyenv's 3.12+ when there is
# one, else from python3.13, python3.12 or python3 on PATH if that is new enough.
# Idempotent: it reinstalls only when oracle-requirements.txt changed. Fails loudly,
# naming what to install.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${XLAMESH_CACHE_DIR:-$repo/.cache}
venv="$cache/oracle-venv"
req="$here/oracle-requirements.txt"
stamp="$venv/.requirements-sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "xlamesh: oracle venv ready: $venv"
  exit 0
fi
# A Python >= 3.12. pyenv's shims (python3.13 on PATH) refuse to run a version
# that is not selected, so its installed versions are tried by path first.
base=""
cands=()
if command -v pyenv >/dev/null 2>&1; then
  root=$(pyenv root)
  for p in "$root"/versions/3.1[2-9]*/bin/python3; do
    [[ -x $p ]] && cands+=("$p")
  done
fi
cands+=(python3.13 python3.12 python3)
for c in "${cands[@]}"; do
  if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    base=$(command -v "$c")
    break
  fi
done
if [[ -z $base ]]; then
  echo "xlamesh: oracle-env: JAX 0.12.0.1 needs Python >= 3.12, and none was found (tried pyenv's versions, python3.13, python3.12, python3); install one, e.g. 'pyenv install 3.13' or 'apt-get install python3.12 python3.12-venv'" >&2
  exit 1
fi
rm -rf "$venv"
"$base" -m venv "$venv" || { echo "xlamesh: oracle-env: $base -m venv failed (install that Python's venv module)" >&2; exit 1; }
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" \
  || { echo "xlamesh: oracle-env: pip could not install $req into $venv" >&2; exit 1; }
echo "$want" >"$stamp"
echo "xlamesh: oracle venv ready: $venv ($("$venv/bin/python" --version), $("$venv/bin/python" -c 'import jax; print("jax", jax.__version__)'))"
