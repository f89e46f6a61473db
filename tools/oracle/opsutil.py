"""Helpers the op groups tools/oracle/ops_*.py share (this module is not a group:
generate.py reads only files named ops_*.py).

Tensors are written as {"shape", "dtype" (numpy's name), "values" (flat,
row-major)}; floats are the exact decimal of the value widened to float64,
NaN and infinities the strings "nan", "inf", "-inf". The Go tests in
internal/oracletest read them back.
"""

import math

import jax
import numpy as np


def tensor(a):
    """The golden form of an array (an input or an output)."""
    a = np.asarray(a)
    if a.dtype == np.bool_:
        vals = [bool(v) for v in a.reshape(-1)]
    elif np.issubdtype(a.dtype, np.integer):
        vals = [int(v) for v in a.reshape(-1)]
    else:
        vals = []
        for v in a.reshape(-1).astype(np.float64):
            v = float(v)
            if math.isnan(v):
                vals.append("nan")
            elif math.isinf(v):
                vals.append("inf" if v > 0 else "-inf")
            else:
                vals.append(v)
    return {"shape": list(a.shape), "dtype": str(a.dtype), "values": vals}


def case(name, jax_expr, fn, *inputs):
    """A case that runs fn under jax.jit on inputs: its inputs and outputs as tensors."""
    outs = jax.jit(fn)(*inputs)
    if not isinstance(outs, (tuple, list)):
        outs = (outs,)
    return {"name": name, "jax": jax_expr, "inputs": [tensor(x) for x in inputs],
            "outputs": [tensor(o) for o in outs]}
