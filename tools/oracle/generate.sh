#!/usr/bin/env bash
# Regenerates the oracle's goldens: asks JAX (in the oracle venv made by
# tools/setup/oracle-env.sh) about every case in tools/oracle/cases.py and
# writes OUTDIR/<group>.json, then OUTDIR/bytecode.json (bytecode.py). `make oracle` runs
# it with OUTDIR=testdata/oracle.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:?usage: generate.sh OUTDIR}
py="${XLAMESH_CACHE_DIR:-$repo/.cache}/oracle-venv/bin/python"
if [[ ! -x "$py" ]]; then
  echo "xlamesh: oracle: no venv at $py (run: bash tools/setup/oracle-env.sh)" >&2
  exit 1
fi
# 8 CPU devices, quiet XLA logging, no warnings in the output, no .pyc in the tree.
export JAX_PLATFORMS=cpu
export XLA_FLAGS="--xla_force_host_platform_device_count=8${XLA_FLAGS:+ $XLA_FLAGS}"
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
export PYTHONWARNINGS=ignore PYTHONDONTWRITEBYTECODE=1 PYTHONHASHSEED=0
"$py" "$here/generate.py" "$out"
# The jax.export artifacts package mlir/bytecode converts (OUTDIR/bytecode.json).
exec "$py" "$here/bytecode.py" "$out"
