#!/usr/bin/env bash
# Regenerates the oracle's goldens: asks JAX (in the oracle venv made by
# tools/setup/oracle-env.sh) about every case in tools/oracle/cases.py and the
# op groups tools/oracle/ops_*.py and writes OUTDIR/<group>.json, then
# OUTDIR/bytecode.json (bytecode.py), OUTDIR/export012.json (export012.py) and
# OUTDIR/backcompat.json (backcompat.py: JAX's own export back-compat data) and
# OUTDIR/bytecode_versions.json (bytecode_versions.py) and OUTDIR/linalg.json (linalg.py: jnp.linalg over
# jaxlib's LAPACK kernels);
# with GROUPs after OUTDIR, only those ("programs", "vjp", "bytecode" and
# "export012", "backcompat", "bytecode_versions", "linalg" name those corpora; "multicontroller" runs multicontroller.py, 2
# JAX processes over gloo). `make oracle` runs it with OUTDIR=testdata/oracle.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:?usage: generate.sh OUTDIR [GROUP...]}
shift
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
groups=()
bytecode=yes
multicontroller=yes
export012=yes
backcompat=yes
bcversions=yes
linalg=yes
if [[ $# -gt 0 ]]; then
  bytecode=no
  multicontroller=no
  export012=no
  backcompat=no
  bcversions=no
  linalg=no
  for g in "$@"; do
    case $g in
    bytecode) bytecode=yes ;;
    multicontroller) multicontroller=yes ;;
    export012) export012=yes ;;
    backcompat) backcompat=yes ;;
    bytecode_versions) bcversions=yes ;;
    linalg) linalg=yes ;;
    *) groups+=("$g") ;;
    esac
  done
fi
if [[ $# -eq 0 || ${#groups[@]} -gt 0 ]]; then
  "$py" "$here/generate.py" "$out" "${groups[@]}"
fi
# One jitted call over a mesh of 2 JAX processes (OUTDIR/multicontroller.json).
if [[ $multicontroller == yes ]]; then
  "$py" "$here/multicontroller.py" "$out"
fi
# The jax.export artifacts package mlir/bytecode converts (OUTDIR/bytecode.json).
if [[ $bytecode == yes ]]; then
  "$py" "$here/bytecode.py" "$out"
fi
# jax.export artifacts of serialization version 12 (OUTDIR/export012.json).
if [[ $export012 == yes ]]; then
  "$py" "$here/export012.py" "$out"
fi
# JAX's export back-compat data, read from the installed JAX (OUTDIR/backcompat.json).
if [[ $backcompat == yes ]]; then
  "$py" "$here/backcompat.py" "$out"
fi
# Artifacts of every MLIR bytecode version (OUTDIR/bytecode_versions.json).
if [[ $bcversions == yes ]]; then
  "$py" "$here/bytecode_versions.py" "$out"
fi
# jnp.linalg functions exported for CPU, over jaxlib's LAPACK kernels (OUTDIR/linalg.json).
if [[ $linalg == yes ]]; then
  "$py" "$here/linalg.py" "$out"
fi
