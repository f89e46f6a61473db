"""Oracle group ops_control: control flow, sorting and scans along an axis.

JAX's while_loop, fori_loop, cond, switch and scan; lax.sort (one and several
operands, num_keys, stable), jnp.sort/argsort (ascending and descending),
lax.top_k; jnp.argmax/argmin (ties, NaN) and lax.cumsum/cumprod/cummax/cummin
(forward and reverse). Each case runs one program of PROGRAMS under jax.jit on
fixed inputs; internal/oracletest/ops_control_test.go builds the same program
(by the case's "program" and "params") with package stablehlo (While, ForLoop,
If, Switch, Scan, Sort..., Argmax, Argmin, Cumsum, ...), runs it on the CPU
plugin and compares with JAX's outputs, and also runs JAX's own lowered module
(the case's "stablehlo") there. Tensors are written by opsutil.tensor.
"""

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from opsutil import tensor

GROUP = "ops_control"

NAN = "nan"
INF = "inf"
DTYPES = {"bool": np.bool_, "i32": np.int32, "f32": np.float32}


def arr(dtype, values, shape=None):
    """An input: values (nested lists; "nan", "inf", "-inf" for floats) of dtype."""
    special = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}
    flat = [special.get(v, v) if isinstance(v, str) else v
            for v in np.asarray(values, dtype=object).reshape(-1).tolist()]
    if shape is None:
        shape = np.shape(np.asarray(values, dtype=object))
    return np.array(flat, dtype=DTYPES[dtype]).reshape(shape)


def _iota(dtype, n, shape, scale=1, offset=0):
    """n values (i*scale+offset) % 17 - 8, deterministic and small."""
    return arr(dtype, [((i * scale + offset) % 17) - 8 for i in range(n)], shape)


# ---------------------------------------------------------------------------
# Programs: name -> (params -> function of the inputs). The Go side has the
# same names in ops_control_test.go.

def _while_count(p):
    def f(x):
        def cond(c):
            return c[0] < 10

        def body(c):
            return c[0] + 1, c[1] * 2 + c[0]
        return lax.while_loop(cond, body, (jnp.int32(0), x))
    return f


def _while_newton(p):
    # Data-dependent trip count: Newton's iteration for sqrt(a), stopped when
    # the step is small or after 50 steps; returns the root and the count.
    def f(a):
        def cond(c):
            i, x, step = c
            return jnp.logical_and(i < 50, step > 1e-6)

        def body(c):
            i, x, step = c
            nx = 0.5 * (x + a / x)
            return i + 1, nx, jnp.max(jnp.abs(nx - x))
        i, x, _ = lax.while_loop(cond, body, (jnp.int32(0), a, jnp.float32(1.0)))
        return x, i
    return f


def _while_capture(p):
    # The body closes over w and b, values of the enclosing function.
    def f(x, w):
        b = w * 3

        def body(c):
            return c[0] + 1, c[1] + w - b
        return lax.while_loop(lambda c: c[0] < 4, body, (jnp.int32(0), x))[1]
    return f


def _fori(p):
    def f(x):
        return lax.fori_loop(0, p["n"], lambda i, c: c * 2 + i.astype(c.dtype) * x, jnp.zeros_like(x))
    return f


def _cond(p):
    def f(pred, x, y):
        return lax.cond(pred, lambda: (x * 2, jnp.sum(y)), lambda: (x - y, jnp.int32(7)))
    return f


def _switch(p):
    def f(i, x):
        return lax.switch(i, [lambda: x + 1, lambda: x * x, lambda: -x])
    return f


def _scan_sum(p):
    def f(xs):
        def body(c, x):
            return c + x, c * x
        return lax.scan(body, jnp.float32(0), xs, reverse=p.get("reverse", False))
    return f


def _scan_multi(p):
    # Two carries (i32, f32 vector), two scanned inputs (rank 2 and 1), three
    # stacked outputs (a vector, a scalar and a bool).
    def f(xs, ks, v):
        def body(c, xk):
            n, acc = c
            x, k = xk
            acc2 = acc * 0.5 + x * k.astype(jnp.float32) + v
            return (n + k, acc2), (acc2, n, k > 0)
        return lax.scan(body, (jnp.int32(1), jnp.zeros(3, jnp.float32)), (xs, ks), reverse=p.get("reverse", False))
    return f


def _scan_length(p):
    def f(x):
        return lax.scan(lambda c, _: (c * 3 + 1, c), x, None, length=p["length"])
    return f


def _scan_rnn(p):
    def f(h0, xs, w):
        def body(h, x):
            h = jnp.tanh(w @ h + x)
            return h, h
        return lax.scan(body, h0, xs)
    return f


def _sort(p):
    def f(x):
        return jnp.sort(x, axis=p["axis"], descending=p.get("descending", False))
    return f


def _sort_multi(p):
    def f(k, v, w):
        return lax.sort((k, v, w), dimension=p["axis"], is_stable=True, num_keys=p["num_keys"])
    return f


def _argsort(p):
    def f(x):
        return jnp.argsort(x, axis=p["axis"], descending=p.get("descending", False))
    return f


def _top_k(p):
    def f(x):
        return lax.top_k(x, p["k"])
    return f


def _argmax(p):
    def f(x):
        return jnp.argmax(x, axis=p["axis"]), jnp.argmin(x, axis=p["axis"])
    return f


def _cumulative(p):
    def f(x):
        a, r = p["axis"], p.get("reverse", False)
        return (lax.cumsum(x, a, r), lax.cumprod(x, a, r), lax.cummax(x, a, r), lax.cummin(x, a, r))
    return f


def _jnp_cumsum(p):
    def f(x):
        return jnp.cumsum(x, axis=p["axis"]), jnp.cumprod(x, axis=p["axis"])
    return f


# name -> (program, the JAX expression the report shows).
PROGRAMS = {
    "while_count": (_while_count, "lax.while_loop(c[0] < 10, (c[0] + 1, c[1] * 2 + c[0]), (0, x))"),
    "while_newton": (_while_newton, "lax.while_loop: Newton steps for sqrt(a) while i < 50 and step > 1e-6"),
    "while_capture": (_while_capture, "lax.while_loop(c[0] < 4, (c[0] + 1, c[1] + w - b), (0, x)), b = 3w closed over"),
    "fori": (_fori, "lax.fori_loop(0, n, c * 2 + i * x, zeros_like(x))"),
    "cond": (_cond, "lax.cond(p, (x * 2, sum(y)), (x - y, 7))"),
    "switch": (_switch, "lax.switch(i, [x + 1, x * x, -x])"),
    "scan_sum": (_scan_sum, "lax.scan((c + x, c * x), 0., xs, reverse)"),
    "scan_multi": (_scan_multi, "lax.scan over (xs, ks), carry (n, acc), ys (acc, n, k > 0), v closed over"),
    "scan_length": (_scan_length, "lax.scan((c * 3 + 1, c), x, None, length)"),
    "scan_rnn": (_scan_rnn, "lax.scan(h = tanh(w @ h + x), h0, xs)"),
    "sort": (_sort, "jnp.sort(x, axis, descending)"),
    "sort_multi": (_sort_multi, "lax.sort((k, v, w), dimension, is_stable=True, num_keys)"),
    "argsort": (_argsort, "jnp.argsort(x, axis, descending)"),
    "top_k": (_top_k, "lax.top_k(x, k)"),
    "argmax": (_argmax, "(jnp.argmax(x, axis), jnp.argmin(x, axis))"),
    "cumulative": (_cumulative, "lax.cumsum/cumprod/cummax/cummin(x, axis, reverse)"),
    "jnp_cumsum": (_jnp_cumsum, "(jnp.cumsum(x, axis), jnp.cumprod(x, axis))"),
}

# ---------------------------------------------------------------------------
# The corpus.

F_SPECIAL = [3.0, -0.0, NAN, 1.0, 0.0, 3.0, "-inf", 2.5, INF, -1.0, 1.0, NAN]
TIES = [2, 7, 7, -1, 7, -1, 0, 2]

CASES = [
    {"name": "while_count_i32", "program": "while_count", "inputs": [_iota("i32", 4, [4])]},
    {"name": "while_count_f32", "program": "while_count", "inputs": [arr("f32", [0.5, -1.25, 3.0, 1e-3])]},
    {"name": "while_newton", "program": "while_newton", "inputs": [arr("f32", [2.0, 9.0, 0.25, 10.0])]},
    {"name": "while_capture", "program": "while_capture", "inputs": [_iota("f32", 6, [2, 3]), arr("f32", [1.0, -2.0, 0.5])]},
    {"name": "fori_5", "program": "fori", "params": {"n": 5}, "inputs": [_iota("i32", 6, [6])]},
    {"name": "fori_0", "program": "fori", "params": {"n": 0}, "inputs": [_iota("f32", 3, [3])]},
    {"name": "cond_true", "program": "cond",
     "inputs": [arr("bool", True, []), _iota("i32", 6, [2, 3]), _iota("i32", 6, [2, 3], 5)]},
    {"name": "cond_false", "program": "cond",
     "inputs": [arr("bool", False, []), _iota("i32", 6, [2, 3]), _iota("i32", 6, [2, 3], 5)]},
    {"name": "switch_0", "program": "switch", "inputs": [arr("i32", 0, []), _iota("f32", 4, [4])]},
    {"name": "switch_1", "program": "switch", "inputs": [arr("i32", 1, []), _iota("f32", 4, [4])]},
    {"name": "switch_2", "program": "switch", "inputs": [arr("i32", 2, []), _iota("f32", 4, [4])]},
    {"name": "switch_clamp_high", "program": "switch", "inputs": [arr("i32", 9, []), _iota("f32", 4, [4])]},
    {"name": "switch_clamp_negative", "program": "switch", "inputs": [arr("i32", -3, []), _iota("f32", 4, [4])]},
    {"name": "scan_sum", "program": "scan_sum", "inputs": [arr("f32", [1.0, 2.0, -3.0, 0.5, 4.0])]},
    {"name": "scan_sum_reverse", "program": "scan_sum", "params": {"reverse": True},
     "inputs": [arr("f32", [1.0, 2.0, -3.0, 0.5, 4.0])]},
    {"name": "scan_multi", "program": "scan_multi",
     "inputs": [_iota("f32", 12, [4, 3], 3), arr("i32", [2, -1, 0, 5]), arr("f32", [0.25, -0.5, 1.0])]},
    {"name": "scan_multi_reverse", "program": "scan_multi", "params": {"reverse": True},
     "inputs": [_iota("f32", 12, [4, 3], 3), arr("i32", [2, -1, 0, 5]), arr("f32", [0.25, -0.5, 1.0])]},
    {"name": "scan_length_only", "program": "scan_length", "params": {"length": 4}, "inputs": [_iota("i32", 2, [2])]},
    {"name": "scan_rnn", "program": "scan_rnn",
     "inputs": [arr("f32", [0.1, -0.2, 0.3]), _iota("f32", 15, [5, 3], 7), arr("f32", [[0.5, -0.25, 0.1], [0.0, 0.3, -0.6], [0.2, 0.2, 0.2]])]},

    {"name": "sort_f32_special", "program": "sort", "params": {"axis": 0}, "inputs": [arr("f32", F_SPECIAL)]},
    {"name": "sort_f32_special_descending", "program": "sort", "params": {"axis": 0, "descending": True},
     "inputs": [arr("f32", F_SPECIAL)]},
    {"name": "sort_i32_axis0", "program": "sort", "params": {"axis": 0}, "inputs": [_iota("i32", 12, [3, 4], 5)]},
    {"name": "sort_i32_axis1", "program": "sort", "params": {"axis": 1}, "inputs": [_iota("i32", 12, [3, 4], 5)]},
    {"name": "sort_multi_stable", "program": "sort_multi", "params": {"axis": 0, "num_keys": 1},
     "inputs": [arr("i32", TIES), arr("f32", [0, 1, 2, 3, 4, 5, 6, 7]), arr("i32", [10, 11, 12, 13, 14, 15, 16, 17])]},
    {"name": "sort_multi_two_keys", "program": "sort_multi", "params": {"axis": 0, "num_keys": 2},
     "inputs": [arr("i32", TIES), arr("f32", [1.0, 0.5, -0.5, 0.0, NAN, 2.0, -0.0, 1.0]), arr("i32", [10, 11, 12, 13, 14, 15, 16, 17])]},
    {"name": "sort_multi_axis1_float_keys", "program": "sort_multi", "params": {"axis": 1, "num_keys": 1},
     "inputs": [arr("f32", [[0.0, NAN, -0.0, 1.0], [2.0, 2.0, "-inf", NAN]]), _iota("i32", 8, [2, 4]), _iota("f32", 8, [2, 4], 3)]},
    {"name": "argsort_ties", "program": "argsort", "params": {"axis": 0}, "inputs": [arr("i32", TIES)]},
    {"name": "argsort_ties_descending", "program": "argsort", "params": {"axis": 0, "descending": True}, "inputs": [arr("i32", TIES)]},
    {"name": "argsort_f32_special", "program": "argsort", "params": {"axis": 0}, "inputs": [arr("f32", F_SPECIAL)]},
    {"name": "argsort_f32_special_descending", "program": "argsort", "params": {"axis": 0, "descending": True},
     "inputs": [arr("f32", F_SPECIAL)]},
    {"name": "argsort_2d_axis1", "program": "argsort", "params": {"axis": 1}, "inputs": [_iota("i32", 12, [3, 4], 7)]},
    {"name": "top_k_ties", "program": "top_k", "params": {"k": 3}, "inputs": [arr("i32", TIES)]},
    {"name": "top_k_2d", "program": "top_k", "params": {"k": 2}, "inputs": [_iota("f32", 12, [3, 4], 5)]},

    {"name": "argmax_ties_i32", "program": "argmax", "params": {"axis": 0}, "inputs": [arr("i32", TIES)]},
    {"name": "argmax_f32_nan", "program": "argmax", "params": {"axis": 0}, "inputs": [arr("f32", [1.0, 5.0, NAN, 5.0, NAN, -1.0])]},
    {"name": "argmax_f32_signed_zero", "program": "argmax", "params": {"axis": 0}, "inputs": [arr("f32", [-0.0, 0.0, -1.0, -0.0])]},
    {"name": "argmax_f32_inf", "program": "argmax", "params": {"axis": 0}, "inputs": [arr("f32", ["-inf", "-inf", INF, INF])]},
    {"name": "argmax_2d_axis0", "program": "argmax", "params": {"axis": 0},
     "inputs": [arr("f32", [[1.0, NAN, 3.0], [1.0, 2.0, NAN], [0.0, NAN, 3.0]])]},
    {"name": "argmax_2d_axis1", "program": "argmax", "params": {"axis": 1}, "inputs": [_iota("i32", 12, [3, 4], 3)]},

    {"name": "cumulative_i32_axis0", "program": "cumulative", "params": {"axis": 0}, "inputs": [_iota("i32", 12, [4, 3], 5)]},
    {"name": "cumulative_i32_axis1_reverse", "program": "cumulative", "params": {"axis": 1, "reverse": True},
     "inputs": [_iota("i32", 12, [3, 4], 5)]},
    {"name": "cumulative_f32", "program": "cumulative", "params": {"axis": 0},
     "inputs": [arr("f32", [0.5, -1.25, 3.0, 0.1, 2.0, -0.75, 1.5])]},
    {"name": "cumulative_f32_reverse", "program": "cumulative", "params": {"axis": 0, "reverse": True},
     "inputs": [arr("f32", [0.5, -1.25, 3.0, 0.1, 2.0, -0.75, 1.5])]},
    {"name": "cumulative_f32_nan", "program": "cumulative", "params": {"axis": 0}, "inputs": [arr("f32", [1.0, NAN, 3.0, -2.0])]},
    {"name": "cumulative_f32_nan_reverse", "program": "cumulative", "params": {"axis": 0, "reverse": True},
     "inputs": [arr("f32", [1.0, NAN, 3.0, -2.0])]},
    {"name": "jnp_cumsum_axis1", "program": "jnp_cumsum", "params": {"axis": 1}, "inputs": [_iota("i32", 12, [2, 6], 7)]},
]

def generate():
    out = []
    for c in CASES:
        fn, expr = PROGRAMS[c["program"]]
        params = c.get("params", {})
        jf = jax.jit(fn(params))
        outs = jax.tree.leaves(jf(*c["inputs"]))
        if params:
            expr += "  " + ", ".join("%s=%s" % kv for kv in sorted(params.items()))
        out.append({"name": c["name"], "jax": expr, "program": c["program"], "params": params,
                    "inputs": [tensor(x) for x in c["inputs"]], "outputs": [tensor(o) for o in outs],
                    "stablehlo": jf.lower(*c["inputs"]).as_text()})
    return out
