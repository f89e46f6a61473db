"""The shape-polymorphism corpus: JAX programs exported with symbolic shapes
(jax.export.symbolic_shape: a batch dimension "4*b" sharded over the mesh and a sequence
dimension "t"), each called by JAX at three concrete sizes, and re-jitted by JAX on variant
meshes and specs at those sizes; and, per program, one call whose shapes break the
specification, with JAX's error.

generate.py writes OUTDIR/programs_poly.json:

    {"programs": [{"name", "about", "mesh", "in_specs", "out_specs", "exported" (base64),
      "text" (the module as JAX prints it, Exported.mlir_module()),
      "in_dims" (the symbolic shapes as JAX writes them), "calls": [{"sizes": {"b", "t"},
      "inputs", "outputs"}], "variants": [{"name", "mesh", "in_specs", "out_specs",
      "outputs": [per call]}], "bad_call": {"inputs", "error"}}]}

Arrays are programs.enc_array's. internal/oracletest/programs_poly_test.go reads it.
"""

import base64

import jax
import jax.numpy as jnp
import numpy as np
from jax import export, lax
from jax.sharding import NamedSharding

from programs import DM, V, enc_array, ints, make_mesh, mesh_2x4, normal, reversed_ids, to_p, _config

SIZES = [{"b": 1, "t": 3}, {"b": 2, "t": 5}, {"b": 3, "t": 8}]


def poly_attention(x, wq):
    q = x @ wq
    s = jnp.einsum("btd,bsd->bts", q, q) / 4
    mask = jnp.tril(jnp.ones((x.shape[1], x.shape[1]), bool))
    s = jnp.where(mask, s, -1e9)
    return (jax.nn.softmax(s, axis=-1) @ q, jnp.argmax(x.sum(-1), axis=1), jnp.cumsum(x, axis=1)[:, 1:],
            jnp.pad(x[..., 0], ((0, 0), (1, 2))))


def poly_mlp(x, w1, b1, w2):
    h = jax.nn.gelu(x @ w1 + b1)
    y = h @ w2
    return y, jnp.mean(y), jnp.max(h, axis=0)


def poly_scan_rnn(xs, h0, wx, wh):
    def step(h, x):
        h = jnp.tanh(x @ wx + h @ wh)
        return h, h
    return lax.scan(step, h0, xs)


def poly_embed(table, ids):
    return table[ids], jnp.sum(jax.nn.one_hot(ids, table.shape[0]), axis=1)


def poly_layout(x):
    flat = x.reshape(x.shape[0], -1)
    return (jnp.concatenate([flat, flat * 2], axis=1), jnp.arange(x.shape[1]) * 2, x[:, ::2], jnp.flip(x, axis=1),
            jnp.transpose(x, (1, 0, 2)))


def poly_convnet(x, k1, k2):
    # SAME padding with a stride over the symbolic t: JAX writes stablehlo.dynamic_conv.
    y = jax.nn.relu(lax.conv_general_dilated(x, k1, (2, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))
    z = lax.conv_general_dilated(y, k2, (1, 1), "VALID", rhs_dilation=(1, 2), dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return y, z, jnp.mean(z, axis=(1, 2))


def shapes_of(B, t):
    """The input shapes for a batch of B (4*b) and a sequence of t."""
    return {
        "poly_attention": [((B, t, 16), np.float32), ((16, 8), np.float32)],
        "poly_mlp": [((B, 16), np.float32), ((16, 32), np.float32), ((32,), np.float32), ((32, 8), np.float32)],
        "poly_scan_rnn": [((t, B, 4), np.float32), ((B, 8), np.float32), ((4, 8), np.float32),
                          ((8, 8), np.float32)],
        "poly_embed": [((32, 8), np.float32), ((B, t), np.int32)],
        "poly_layout": [((B, t, 4), np.float32)],
        "poly_convnet": [((B, t, 6, 3), np.float32), ((3, 2, 3, 4), np.float32), ((2, 2, 4, 4), np.float32)],
    }


def inputs_of(name, B, t, seed):
    out = []
    for i, (shape, dt) in enumerate(shapes_of(B, t)[name]):
        if dt == np.int32:
            out.append(ints(shape, seed + i, 0, 32))
        else:
            out.append(normal(shape, seed + i, step=1 / 16) / 2)
    return out


PROGRAMS = [
    ("poly_attention", "causal self-attention over a symbolic batch (4*b, sharded) and sequence (t): einsum, "
     "tril mask, softmax, argmax, cumsum, pad", poly_attention,
     [["data", None, None], [None, "model"]], [["data"], ["data"], ["data"], ["data"]]),
    ("poly_mlp", "gelu MLP on a symbolic batch, with a mean and a max over it", poly_mlp,
     [["data", None], [None, "model"], ["model"], ["model", None]], [["data", None], [], [None]]),
    ("poly_scan_rnn", "lax.scan over a symbolic number of steps t, batch 4*b", poly_scan_rnn,
     [[None, "data", None], ["data", None], [None, None], [None, None]], [["data", None], [None, "data", None]]),
    ("poly_embed", "embedding lookup (gather) and one_hot of symbolic [4*b, t] ids", poly_embed,
     [[None, "model"], ["data", None]], [["data", None, None], ["data", None]]),
    ("poly_layout", "reshape to [4*b, t*4], concatenate, arange(t), strided slice, flip, transpose", poly_layout,
     [["data", None, None]], [["data", None], [None], ["data", None, None], ["data", None, None], [None, "data", None]]),
    ("poly_convnet", "convolutions over a symbolic batch (4*b) and height (t): SAME with a stride (dynamic_conv), "
     "VALID with a dilated kernel, relu, a spatial mean", poly_convnet,
     [["data", None, None, None], [None, None, None, "model"], [None, None, "model", None]],
     [["data", None, None, None], ["data", None, None, None], ["data", None]]),
]


def _jit(fn, mesh_json, in_specs, out_specs):
    mesh = make_mesh(mesh_json)
    in_sh = tuple(NamedSharding(mesh, to_p(s)) for s in in_specs)
    out_sh = tuple(NamedSharding(mesh, to_p(s)) for s in out_specs)
    return jax.jit(fn, in_shardings=in_sh, out_shardings=out_sh), in_sh


def _outs(tree):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def gen(name, about, fn, in_specs, out_specs):
    b, t = export.symbolic_shape("b, t")
    specs = [jax.ShapeDtypeStruct(shape, dt) for shape, dt in shapes_of(4 * b, t)[name]]
    with _config(jax_traceback_in_locations_limit=0):
        jf, in_sh = _jit(fn, DM, in_specs, out_specs)
        exp = export.export(jf)(*specs)
        blob = exp.serialize()
        calls = []
        for k, sz in enumerate(SIZES):
            inputs = inputs_of(name, 4 * sz["b"], sz["t"], 1000 + 10 * k)
            outs = _outs(jf(*[jax.device_put(x, s) for x, s in zip(inputs, in_sh)]))
            again = _outs(exp.call(*[jax.device_put(x, s) for x, s in zip(inputs, in_sh)]))
            for a, o in zip(again, outs):
                if a.shape != o.shape or not np.allclose(a, o, rtol=1e-5, atol=1e-5):
                    raise ValueError("%s: the exported call differs from the jitted one at %s" % (name, sz))
            calls.append({"sizes": sz, "inputs": [enc_array(x) for x in inputs],
                          "outputs": [enc_array(o) for o in again]})
        variants = []
        for v in [V("mesh_2x4", mesh_2x4(DM)), V("devices_reversed", reversed_ids(DM)),
                  V("replicated", DM, [[None] * len(s) for s in in_specs], [[None] * len(s) for s in out_specs])]:
            vin = v["in_specs"] or in_specs
            vout = v["out_specs"] or out_specs
            vjf, vin_sh = _jit(fn, v["mesh"], vin, vout)
            outs = []
            for k, sz in enumerate(SIZES):
                inputs = inputs_of(name, 4 * sz["b"], sz["t"], 1000 + 10 * k)
                outs.append([enc_array(o) for o in _outs(vjf(*[jax.device_put(x, s) for x, s in zip(inputs, vin_sh)]))])
            variants.append({"name": v["name"], "mesh": v["mesh"], "in_specs": vin, "out_specs": vout, "outputs": outs})
        # A batch that is not a multiple of 4 breaks the specification "4*b".
        bad = inputs_of(name, 6, 3, 7)
        try:
            exp.call(*bad)
            raise ValueError("%s: the bad call did not fail" % name)
        except ValueError as e:
            err = str(e)
            if "polymorphic shapes specification" not in err:
                raise
    return {"name": name, "about": about, "mesh": DM, "in_specs": in_specs, "out_specs": out_specs,
            "exported": base64.b64encode(blob).decode("ascii"), "text": exp.mlir_module(),
            "in_dims": [[str(d) for d in a.shape] for a in exp.in_avals],
            "calls": calls, "variants": variants,
            "bad_call": {"inputs": [enc_array(x) for x in bad], "error": err}}


def generate():
    return [gen(*p) for p in PROGRAMS]
