"""Oracle group ops_shardmap: JAX's answers for lower's shard_map collectives
(axis_index, psum/pmax/pmin, ppermute, all_to_all, psum_scatter, all_gather) and for
shard_map's replication check (check_vma), on the 8 CPU devices in device order as a 4x2
("x", "y") mesh or, where a case says so, a 1-D (8,) "i" or a 2x4 ("x", "y") mesh.

Each case is jax.jit(jax.shard_map(body, mesh, in_specs, out_specs, axis_names,
check_vma)) on fixed global inputs: its outputs (global arrays), or the error JAX raises.
internal/oracletest/ops_shardmap_test.go builds the same shard_map with package lower,
compiles it for the mesh, feeds each device its block and compares the assembled
results, or checks that lower reports the error (ErrReplication naming the axis). Tensor
format as in ops_data.py. Specs are lists of None, "axis" or ["a", "b"].
"""

import jax
import numpy as np
from jax import lax
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from opsutil import tensor

GROUP = "ops_shardmap"
MESH = {"shape": [4, 2], "names": ["x", "y"]}


MESH_1D = {"shape": [8], "names": ["i"]}
MESH_2X4 = {"shape": [2, 4], "names": ["x", "y"]}


def mesh(m=None):
    m = m or MESH
    return Mesh(np.array(jax.devices()[:8], dtype=object).reshape(m["shape"]), tuple(m["names"]))


def to_p(spec):
    return P(*[tuple(e) if isinstance(e, list) else e for e in spec])


def f32(*shape):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float32) - n // 3).reshape(shape)


CASES = []


def smap(name, expr, body, inputs, in_specs, out_specs, axis_names=None, check_vma=True, error=False, mesh=None):
    CASES.append(dict(name=name, jax=expr, body=body, inputs=inputs, in_specs=in_specs, out_specs=out_specs,
                      axis_names=axis_names, check_vma=check_vma, error=error, mesh=mesh or MESH))


smap("axis_index_x", "lax.axis_index('x')[None]", lambda: lax.axis_index("x")[None], [], [], [["x"]])
smap("axis_index_xy", "lax.axis_index(('x', 'y'))[None, None]", lambda: lax.axis_index(("x", "y"))[None, None],
     [], [], [["x", "y"]])
smap("axis_index_y_partial", "b * 0 + lax.axis_index('y'), axis_names={'y'}",
     lambda b: b * 0 + lax.axis_index("y"), [f32(4)], [[None]], [["y"]], axis_names=["y"])
smap("axis_index_x_partial_size", "b + lax.axis_index('x') * 10, axis_names={'x'}",
     lambda b: b + (lax.axis_index("x") * 10).astype(b.dtype), [f32(8)], [["x"]], [["x"]], axis_names=["x"])
smap("psum_x", "lax.psum(b, 'x')", lambda b: lax.psum(b, "x"), [f32(16, 8)], [["x", "y"]], [[None, "y"]])
smap("psum_replicated", "lax.psum(b, 'x') of a replicated b", lambda b: lax.psum(b, "x"), [f32(4, 2)], [[]], [[]])
smap("pmax_y", "lax.pmax(b, 'y')", lambda b: lax.pmax(b, "y"), [f32(16, 8)], [["x", "y"]], [["x"]])
smap("pmin_xy", "lax.pmin(b, ('x', 'y'))", lambda b: lax.pmin(b, ("x", "y")), [f32(16, 8)], [["x", "y"]], [[]])
smap("ppermute_x", "lax.ppermute(b, 'x', [(0, 1), (1, 2), (2, 3), (3, 0)])",
     lambda b: lax.ppermute(b, "x", [(0, 1), (1, 2), (2, 3), (3, 0)]), [f32(8, 4)], [["x"]], [["x"]])
smap("ppermute_partial_perm", "lax.ppermute(b, 'x', [(0, 2), (3, 1)]) (others get zeros)",
     lambda b: lax.ppermute(b, "x", [(0, 2), (3, 1)]), [f32(8, 4)], [["x"]], [["x"]])
smap("all_to_all_y", "lax.all_to_all(b, 'y', 0, 1, tiled=True)",
     lambda b: lax.all_to_all(b, "y", 0, 1, tiled=True), [f32(16, 8)], [["x", "y"]], [["x", "y"]])
smap("psum_scatter_tiled", "lax.psum_scatter(b, 'x', scatter_dimension=0, tiled=True)",
     lambda b: lax.psum_scatter(b, "x", scatter_dimension=0, tiled=True), [f32(8, 4)], [[None, "y"]], [["x", "y"]])
smap("psum_scatter_untiled", "lax.psum_scatter(b, 'x', scatter_dimension=0, tiled=False)",
     lambda b: lax.psum_scatter(b, "x", scatter_dimension=0, tiled=False), [f32(4, 6)], [[None, "y"]], [[["x", "y"]]])
smap("all_gather_unchecked", "lax.all_gather(b, 'x', axis=0, tiled=True), check_vma=False",
     lambda b: lax.all_gather(b, "x", axis=0, tiled=True), [f32(8, 4)], [["x"]], [[]], check_vma=False)
smap("unchecked_identity", "b with out_specs P(), check_vma=False (device 0's block)",
     lambda b: b, [f32(8, 4)], [["x"]], [[]], check_vma=False)
smap("replication_error", "b with out_specs P()", lambda b: b, [f32(8, 4)], [["x"]], [[]], error=True)
smap("replication_error_second", "(b, -b) with out_specs (P('x', 'y'), P('y'))", lambda b: (b, -b),
     [f32(8, 4)], [["x", "y"]], [["x", "y"], ["y"]], error=True)
smap("replication_all_gather", "lax.all_gather(b, 'x', tiled=True) with out_specs P()",
     lambda b: lax.all_gather(b, "x", tiled=True), [f32(8, 4)], [["x"]], [[]], error=True)
smap("replication_axis_index", "b + lax.axis_index('y') with out_specs P('x')",
     lambda b: b + lax.axis_index("y").astype(b.dtype), [f32(8, 4)], [["x"]], [["x"]], error=True)
smap("replication_ppermute", "lax.ppermute(b, 'y', [(0, 1), (1, 0)]) of a replicated b, out_specs P()",
     lambda b: lax.ppermute(b, "y", [(0, 1), (1, 0)]), [f32(4, 2)], [[]], [[]], error=True)

# tiled=False forms of all_gather and all_to_all, on the 1-D (8,) "i" mesh, the 4x2 and a
# 2x4 mesh, over one axis and several.
smap("all_gather_untiled_1d", "lax.all_gather(b, 'i', axis=1, tiled=False), mesh (8,) 'i'",
     lambda b: lax.all_gather(b, "i", axis=1, tiled=False), [f32(16, 3)], [["i"]], [["i"]], mesh=MESH_1D)
smap("all_gather_untiled_y", "lax.all_gather(b, 'y', axis=0, tiled=False)",
     lambda b: lax.all_gather(b, "y", axis=0, tiled=False), [f32(8, 4)], [["x", "y"]], [[None, "x", "y"]])
smap("all_gather_untiled_xy_last", "lax.all_gather(b, ('x', 'y'), axis=2, tiled=False)",
     lambda b: lax.all_gather(b, ("x", "y"), axis=2, tiled=False), [f32(8, 4)], [["x", "y"]], [["x", "y", None]])
smap("all_gather_untiled_2x4_y", "lax.all_gather(b, 'y', axis=1, tiled=False), mesh 2x4",
     lambda b: lax.all_gather(b, "y", axis=1, tiled=False), [f32(4, 3)], [["x"]], [["x", "y"]], mesh=MESH_2X4)
smap("all_gather_untiled_unchecked", "lax.all_gather(b, 'x', axis=0, tiled=False), check_vma=False",
     lambda b: lax.all_gather(b, "x", axis=0, tiled=False), [f32(8, 2)], [["x"]], [[]], check_vma=False)
smap("all_to_all_untiled_1d", "lax.all_to_all(b, 'i', 0, 1, tiled=False), mesh (8,) 'i'",
     lambda b: lax.all_to_all(b, "i", 0, 1, tiled=False), [f32(64, 3)], [["i"]], [["i"]], mesh=MESH_1D)
smap("all_to_all_untiled_x_concat_first", "lax.all_to_all(b, 'x', 1, 0, tiled=False)",
     lambda b: lax.all_to_all(b, "x", 1, 0, tiled=False), [f32(2, 8, 3)], [[None, "y"]], [["x", "y"]])
smap("all_to_all_untiled_xy_same", "lax.all_to_all(b, ('x', 'y'), 0, 0, tiled=False)",
     lambda b: lax.all_to_all(b, ("x", "y"), 0, 0, tiled=False), [f32(8, 16)], [[None, ["x", "y"]]],
     [[None, ["x", "y"]]])
smap("all_to_all_untiled_2x4_yx", "lax.all_to_all(b, ('y', 'x'), 2, 1, tiled=False), mesh 2x4",
     lambda b: lax.all_to_all(b, ("y", "x"), 2, 1, tiled=False), [f32(2, 3, 8)], [[]], [["x", "y"]], mesh=MESH_2X4)


def run(c):
    m = mesh(c["mesh"])
    kw = {}
    if c["axis_names"] is not None:
        kw["axis_names"] = set(c["axis_names"])
    outs_tuple = len(c["out_specs"]) != 1
    out_specs = tuple(to_p(s) for s in c["out_specs"]) if outs_tuple else to_p(c["out_specs"][0])
    f = jax.jit(jax.shard_map(c["body"], mesh=m, in_specs=tuple(to_p(s) for s in c["in_specs"]),
                              out_specs=out_specs, check_vma=c["check_vma"], **kw))
    outs = f(*c["inputs"])
    if not outs_tuple:
        outs = (outs,)
    return [tensor(o) for o in outs]


def generate():
    out = []
    for c in CASES:
        rec = {"name": c["name"], "jax": c["jax"], "mesh": c["mesh"], "in_specs": c["in_specs"],
               "out_specs": c["out_specs"], "axis_names": c["axis_names"], "check_vma": c["check_vma"],
               "inputs": [tensor(x) for x in c["inputs"]], "expect_error": c["error"]}
        try:
            rec["outputs"] = run(c)
            if c["error"]:
                raise ValueError("ops_shardmap: case %s: JAX raised no error" % c["name"])
        except Exception as e:  # noqa: BLE001 - JAX's error is the answer
            if not c["error"]:
                raise
            rec["error"] = {"class": type(e).__name__, "message": str(e)}
        out.append(rec)
    return out
