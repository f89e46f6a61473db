#!/usr/bin/env bash
# Writes OUTDIR/export012.json (tools/oracle/export012.py): jax.export artifacts of JAX 0.12.0.1.
# It runs in its own venv, $JAX012_VENV (default $XLAMESH_CACHE_DIR/jax012-venv), made here
# with a Python >= 3.12 when missing; with none installed it fails, naming what to install.
#   bash tools/oracle/export012.sh testdata/oracle
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:?usage: export012.sh OUTDIR}
venv=${JAX012_VENV:-${XLAMESH_CACHE_DIR:-$repo/.cache}/jax012-venv}
if [[ ! -x "$venv/bin/python" ]]; then
  base=""
  for c in "$(pyenv root 2>/dev/null)"/versions/3.1[2-9]*/bin/python3 python3.13 python3.12; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      base=$c
      break
    fi
  done
  if [[ -z $base ]]; then
    echo "xlamesh: oracle: export012 needs JAX 0.12.0.1, which needs Python >= 3.12; none found (install one, e.g. pyenv install 3.13)" >&2
    exit 1
  fi
  "$base" -m venv "$venv"
  "$venv/bin/pip" install -q jax==0.12.0.1 flatbuffers
fi
export JAX_PLATFORMS=cpu
export XLA_FLAGS="--xla_force_host_platform_device_count=8${XLA_FLAGS:+ $XLA_FLAGS}"
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
export PYTHONWARNINGS=ignore PYTHONDONTWRITEBYTECODE=1 PYTHONHASHSEED=0
exec "$venv/bin/python" "$here/export012.py" "$out"
