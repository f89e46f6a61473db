"""Helpers the op groups tools/oracle/ops_*.py share (this module is not a group:
generate.py reads only files named ops_*.py).

Tensors are written as {"shape", "dtype" (numpy's name), "values" (flat,
row-major)}; floats are the exact decimal of the value widened to float64,
NaN and infinities the strings "nan", "inf", "-inf"; dtypes beyond PLAIN
(complex, float8, int4...) carry their raw bytes in "hex" and their values
as strings, for reading only. The Go tests in internal/oracletest read them back.
"""

import math

import jax
import numpy as np


# The dtypes a tensor writes as values alone; the others (complex, the float8 family,
# float4, int4...) also get "hex", their raw bytes as NumPy's ml_dtypes hold them.
PLAIN = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bfloat16", "float16",
         "float32", "float64"}


def tensor(a):
    """The golden form of an array (an input or an output)."""
    a = np.asarray(a)
    if str(a.dtype) not in PLAIN:
        vals = [str(v) for v in a.reshape(-1)]
        return {"shape": list(a.shape), "dtype": str(a.dtype), "values": vals,
                "hex": np.ascontiguousarray(a).tobytes().hex()}
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
