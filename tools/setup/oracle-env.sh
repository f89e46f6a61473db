#!/usr/bin/env bash
# Creates the oracle's Python venv (JAX on CPU) in <repo>/.cache/oracle-venv.
# Idempotent: it reinstalls only when oracle-requirements.txt changed. Fails loudly.
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
command -v python3 >/dev/null || { echo "xlamesh: oracle-env: python3 not found" >&2; exit 1; }
python3 -m venv "$venv" || { echo "xlamesh: oracle-env: python3 -m venv failed (apt-get install python3-venv)" >&2; exit 1; }
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req" \
  || { echo "xlamesh: oracle-env: pip could not install $req" >&2; exit 1; }
echo "$want" >"$stamp"
echo "xlamesh: oracle venv ready: $venv ($("$venv/bin/python" -c 'import jax; print("jax", jax.__version__)'))"
