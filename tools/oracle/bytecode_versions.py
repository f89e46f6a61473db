"""MLIR bytecode of every version a StableHLO portable artifact is written in, for package
mlir/bytecode.

StableHLO serializes a portable artifact for a target StableHLO version, and older targets get
older MLIR bytecode: 0.9.0 version 0, 0.10.0 version 1, 0.12.0 version 3, 0.14.0 version 4,
0.15.0 and later version 6 (no target writes versions 2 or 5). This script lowers a few JAX
programs on one CPU device, serializes each for those targets with JAX's own StableHLO
(jaxlib.mlir.dialects.stablehlo.serialize_portable_artifact_str), checks the version each
artifact has, and writes OUTDIR/bytecode_versions.json:

    {"jax_version", "stablehlo_version", "programs": [{"name", "about", "inputs", "outputs",
      "artifacts": [{"target", "bytecode_version", "module" (base64)}]}]}

with JAX's outputs of the jitted function (programs.enc_array). internal/oracletest's
TestBytecodeVersions runs every artifact.
"""

import base64
import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxlib.mlir.dialects import stablehlo

from programs import enc_array, normal, ints, _config

TARGETS = {"0.9.0": 0, "0.10.0": 1, "0.12.0": 3, "0.14.0": 4, "0.15.0": 6}


def loop_mlp(x, w):
    y = lax.fori_loop(0, 3, lambda i, y: jnp.tanh(y @ w) + i.astype(y.dtype), x)
    return y, jnp.sum(y, axis=1), jnp.argmax(y, axis=1)


def int_ops(a, b):
    return a * b + 1, a // b, jnp.where(a > b, a, b), jnp.cumsum(a), jnp.sort(b)


def gather_scatter(x, idx):
    return x[idx], x.at[idx].add(1.0), lax.cond(jnp.sum(x) > 0, lambda v: v * 2, lambda v: -v, x)


PROGRAMS = [
    ("loop_mlp", "fori_loop of tanh(y @ w), a reduction, argmax", loop_mlp,
     [normal((4, 8), 1) / 2, normal((8, 8), 2) / 4]),
    ("int_ops", "integer arithmetic, floor division, where, cumsum, sort", int_ops,
     [ints((6,), 3, -20, 20), ints((6,), 4, 1, 7)]),
    ("gather_scatter", "x[idx], x.at[idx].add(1), lax.cond", gather_scatter,
     [normal((5, 3), 5), np.array([4, 0, 2, 0], np.int32)]),
]


def generate():
    out = []
    with _config(jax_traceback_in_locations_limit=0):
        for name, about, fn, inputs in PROGRAMS:
            jf = jax.jit(fn)
            text = jf.lower(*inputs).as_text()
            outputs = [np.asarray(o) for o in jax.tree_util.tree_leaves(jf(*inputs))]
            arts = []
            for target, version in sorted(TARGETS.items(), key=lambda kv: kv[1]):
                b = stablehlo.serialize_portable_artifact_str(text, target)
                if b[:4] != b"ML\xefR" or b[4] >> 1 != version:
                    raise ValueError("%s for %s: bytecode version %d, want %d" % (name, target, b[4] >> 1, version))
                arts.append({"target": target, "bytecode_version": version, "module": base64.b64encode(b).decode("ascii")})
            out.append({"name": name, "about": about, "inputs": [enc_array(x) for x in inputs],
                        "outputs": [enc_array(o) for o in outputs], "artifacts": arts})
    return out


def main():
    progs = generate()
    with open(os.path.join(sys.argv[1], "bytecode_versions.json"), "w", encoding="utf-8") as f:
        json.dump({"jax_version": jax.__version__, "stablehlo_version": stablehlo.get_current_version(),
                   "generator": "tools/oracle/bytecode_versions.py", "programs": progs}, f, indent=1, sort_keys=True)
        f.write("\n")
    print("oracle: %-14s %4d programs" % ("bytecode_versions", len(progs)))


if __name__ == "__main__":
    main()
