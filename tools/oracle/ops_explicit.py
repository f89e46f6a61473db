"""Oracle group explicit: JAX's sharding in types (Explicit mesh axes), op by op.

Each case jits a function of lax ops on fixed global inputs placed with
jax.device_put(x, NamedSharding(mesh, spec)) on a mesh of the 8 CPU devices (2x4
("X", "Y"), all axes Explicit as jax.make_mesh gives them since JAX 0.9, unless the
case's mesh says otherwise). It records:

- types: jax.typeof of the values the function hands to probe(), in order;
- constraints: the shardings of the `sdy.sharding_constraint` ops of the lowered
  module, in order, and the `sdy.sharding` of @main's arguments and results;
- outputs: the results of running it;
- or the error JAX raises while tracing (class and message).

internal/oracletest/ops_explicit_test.go builds the same ops with package lower on the
same mesh (each case's Go body is named there) and compares all four. The functions
use lax ops one to one with lower's builder (no Python scalars, which JAX would
broadcast with a constraint of their own). Tensor format as in ops_data.py; specs
are lists of None, "axis" or ["a", "b"].
"""

import re

import jax
import numpy as np
import jax.numpy as jnp
from jax import lax
from jax.sharding import AxisType, NamedSharding, auto_axes, explicit_axes
from jax.sharding import PartitionSpec as P

from opsutil import tensor

GROUP = "explicit"
MESH = {"shape": [2, 4], "names": ["X", "Y"], "types": ["Explicit", "Explicit"]}
MIXED = {"shape": [2, 4], "names": ["X", "Y"], "types": ["Explicit", "Auto"]}

CASES = []
PROBES = []


def probe(x):
    PROBES.append(str(jax.typeof(x)))
    return x


def f32(*shape):
    n = int(np.prod(shape))
    return (np.arange(n, dtype=np.float32) - n // 3).reshape(shape)


def spec(s):
    return P(*[tuple(e) if isinstance(e, list) else e for e in s])


def case(name, expr, fn, args, error=False, mesh=None, grad=False, scalar_constraints=True, first_line=False,
         own_lowering=False):
    """args: [(array, spec)]. A grad case's fn is a scalar loss: the case runs
    jax.value_and_grad(fn, argnums=all) and probes each gradient after the loss's own probes.
    scalar_constraints=False marks a case whose JAX lowering adds scalar ops of its own (the
    index arithmetic of dynamic_slice, a loop's Python-int counter, cond's predicate
    converted to an index): the comparison leaves out rank-0 constraints.
    first_line=True: JAX's error goes on to quote the Python source (names of functions and
    variables), so only its first line is compared.
    own_lowering=True: JAX lowers the op through a loop of its own layout (lax.scan), so the
    constraints are not compared; types, entry shardings and outputs are."""
    CASES.append(dict(name=name, jax=expr, fn=fn, args=args, error=error, mesh=mesh or MESH, grad=grad,
                      scalar_constraints=scalar_constraints, first_line=first_line, own_lowering=own_lowering))


def with_grads(loss, n):
    def f(*args):
        v, gs = jax.value_and_grad(loss, argnums=tuple(range(n)))(*args)
        return (v, *[probe(g) for g in gs])
    return f


def make(m):
    types = tuple(getattr(AxisType, t) for t in m["types"])
    return jax.make_mesh(tuple(m["shape"]), tuple(m["names"]), axis_types=types)


DOT = (((1,), (0,)), ((), ()))
BDOT = (((2,), (1,)), ((0,), (0,)))

# Elementwise: broadcasting_sharding_rule.
case("add_same", "lax.add(x, y), both P('X', 'Y')", lambda x, y: probe(lax.add(x, y)),
     [(f32(8, 4), ["X", "Y"]), (f32(8, 4), ["X", "Y"])])
case("add_one_sharded", "lax.add(x, y), P('X') + P()", lambda x, y: probe(lax.add(x, y)),
     [(f32(8, 4), ["X", None]), (f32(8, 4), [])])
case("add_two_dims", "lax.add(x, y), P('X') + P(None, 'Y')", lambda x, y: probe(lax.add(x, y)),
     [(f32(8, 4), ["X", None]), (f32(8, 4), [None, "Y"])])
case("add_incompatible", "lax.add(x, y), P('X') + P('Y')", lambda x, y: probe(lax.add(x, y)),
     [(f32(8, 8), ["X", None]), (f32(8, 8), ["Y", None])], error=True)
case("add_illegal_result", "lax.add(x, y), P('X') + P(None, 'X')", lambda x, y: probe(lax.add(x, y)),
     [(f32(4, 4), ["X", None]), (f32(4, 4), [None, "X"])], error=True)
case("sub_multi_axis", "lax.sub(x, y), P(('X', 'Y')) - P()", lambda x, y: probe(lax.sub(x, y)),
     [(f32(16, 2), [["X", "Y"]]), (f32(16, 2), [])])
case("mul_chain", "lax.mul(lax.mul(x, y), x)", lambda x, y: probe(lax.mul(probe(lax.mul(x, y)), x)),
     [(f32(8, 4), ["X", None]), (f32(8, 4), [None, "Y"])])
case("max_min", "lax.min(lax.max(x, y), y)", lambda x, y: probe(lax.min(probe(lax.max(x, y)), y)),
     [(f32(8, 4), [None, "Y"]), (f32(8, 4), [])])
case("neg_exp", "lax.exp(lax.neg(x))", lambda x: probe(lax.exp(probe(lax.neg(x)))), [(f32(8, 4) / 8, ["X", "Y"])])
case("abs", "lax.abs(x)", lambda x: probe(lax.abs(x)), [(f32(8, 4), [None, "Y"])])
case("convert", "lax.convert_element_type(x, int32)", lambda x: probe(lax.convert_element_type(x, np.int32)),
     [(f32(8, 4), ["X", "Y"])])
case("compare_select", "lax.select(x > y, x, y)", lambda x, y: probe(lax.select(probe(lax.gt(x, y)), x, y)),
     [(f32(8, 4), ["X", None]), (f32(8, 4)[::-1].copy(), ["X", None])])
case("select_mismatch", "lax.select(p, x, y) with x P('X'), y P(None, 'Y')",
     lambda x, y: probe(lax.select(lax.gt(x, x), x, y)),
     [(f32(8, 4), ["X", None]), (f32(8, 4), [None, "Y"])], error=True)
case("broadcast_then_add", "lax.broadcast_in_dim(a, (4, 8), (0, 1)) + lax.broadcast_in_dim(b, (4, 8), (0, 1))",
     lambda a, b: probe(lax.add(probe(lax.broadcast_in_dim(a, (4, 8), (0, 1))),
                                probe(lax.broadcast_in_dim(b, (4, 8), (0, 1))))),
     [(f32(4, 1), ["X", None]), (f32(1, 8), [None, "Y"])])

# dot_general.
case("dot_free", "lax.dot_general(x, y) [8@X,4]·[4,16@Y]", lambda x, y: probe(lax.dot_general(x, y, DOT)),
     [(f32(8, 4), ["X", None]), (f32(4, 16), [None, "Y"])])
case("dot_contract_one_side", "lax.dot_general(x, y) [8,4@X]·[4,16]", lambda x, y: probe(lax.dot_general(x, y, DOT)),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), [])])
case("dot_contract_rhs_side", "lax.dot_general(x, y) [8@Y,4]·[4@X,16]", lambda x, y: probe(lax.dot_general(x, y, DOT)),
     [(f32(8, 4), ["Y", None]), (f32(4, 16), ["X", None])])
case("dot_contract_both", "lax.dot_general(x, y) [8,4@X]·[4@X,16]", lambda x, y: probe(lax.dot_general(x, y, DOT)),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])], error=True)
case("dot_contract_both_out", "lax.dot_general(x, y, out_sharding=P('X', None))",
     lambda x, y: probe(lax.dot_general(x, y, DOT, out_sharding=P("X", None))),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])])
case("dot_contract_xy", "lax.dot_general(x, y) [8,4@X]·[4@Y,16]", lambda x, y: probe(lax.dot_general(x, y, DOT)),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["Y", None])], error=True)
case("dot_illegal_result", "lax.dot_general(x, y) [8@X,4]·[4,16@X]", lambda x, y: probe(lax.dot_general(x, y, DOT)),
     [(f32(8, 4), ["X", None]), (f32(4, 16), [None, "X"])], error=True)
case("dot_batch", "lax.dot_general(x, y) [2@X,8,4]·[2@X,4,16@Y]", lambda x, y: probe(lax.dot_general(x, y, BDOT)),
     [(f32(2, 8, 4), ["X", None, None]), (f32(2, 4, 16), ["X", None, "Y"])])
case("dot_batch_mismatch", "lax.dot_general(x, y) [2@X,8,4]·[2,4,16]", lambda x, y: probe(lax.dot_general(x, y, BDOT)),
     [(f32(2, 8, 4), ["X", None, None]), (f32(2, 4, 16), [])], error=True)
case("dot_unreduced", "lax.dot_general(x, y, out_sharding=P(None, None, unreduced={'X'})), then reshard to P()",
     lambda x, y: probe(jax.sharding.reshard(
         probe(lax.dot_general(x, y, DOT, out_sharding=P(None, None, unreduced={"X"}))), P())),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])])
case("dot_unreduced_wrong_axes", "lax.dot_general(x, y, out_sharding=P(None, None, unreduced={'Y'})), contracting on X",
     lambda x, y: probe(lax.dot_general(x, y, DOT, out_sharding=P(None, None, unreduced={"Y"}))),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])], error=True)
case("dot_unreduced_input", "lax.dot_general of an unreduced value",
     lambda x, y, z: probe(lax.dot_general(lax.dot_general(x, y, DOT, out_sharding=P(None, None, unreduced={"X"})),
                                           z, DOT)),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None]), (f32(16, 2), [])], error=True)

# Unreduced elementwise.
def partial_sum(x, y):
    return lax.dot_general(x, y, DOT, out_sharding=P(None, None, unreduced={"X"}))


case("add_unreduced", "partial sums added, then resharded to P('Y')",
     lambda x, y: probe(jax.sharding.reshard(probe(lax.add(partial_sum(x, y), partial_sum(x, y))), P("Y"))),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])])
case("add_unreduced_one_side", "a partial sum plus a reduced value",
     lambda x, y: probe(lax.add(partial_sum(x, y), lax.dot_general(x, y, DOT, out_sharding=P(None, None)))),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])], error=True)
case("mul_unreduced_both", "two partial sums multiplied",
     lambda x, y: probe(lax.mul(partial_sum(x, y), partial_sum(x, y))),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])], error=True)
case("exp_unreduced", "lax.exp of a partial sum",
     lambda x, y: probe(lax.exp(partial_sum(x, y))),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])], error=True)
case("sum_unreduced", "lax.reduce_sum of a partial sum keeps it unreduced (JAX 0.12), then reshard",
     lambda x, y: probe(jax.sharding.reshard(probe(lax.reduce_sum(partial_sum(x, y), (0,))), P())),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])])

# Reductions.
case("sum_sharded_dim", "lax.reduce_sum(x, (0,)) of [8@X,4@Y]", lambda x: probe(lax.reduce_sum(x, (0,))),
     [(f32(8, 4), ["X", "Y"])])
case("max_dim1", "lax.reduce_max(x, (1,)) of [8@X,4@Y]", lambda x: probe(lax.reduce_max(x, (1,))),
     [(f32(8, 4), ["X", "Y"])])
case("sum_all", "lax.reduce_sum(x, (0, 1))", lambda x: probe(lax.reduce_sum(x, (0, 1))), [(f32(8, 4), ["X", "Y"])])
case("min_3d", "lax.reduce_min(x, (1,)) of [2@X,4,8@Y]", lambda x: probe(lax.reduce_min(x, (1,))),
     [(f32(2, 4, 8), ["X", None, "Y"])])
case("sum_out_unreduced", "lax.reduce_sum(x, (0,), out_sharding=P('Y', unreduced={'X'})), then reshard to P('Y')",
     lambda x: probe(jax.sharding.reshard(probe(lax.reduce_sum(x, (0,), out_sharding=P("Y", unreduced={"X"}))), P("Y"))),
     [(f32(8, 4), ["X", "Y"])])
case("sum_out_unreduced_wrong", "lax.reduce_sum(x, (0,), out_sharding=P(None, unreduced={'Y'}))",
     lambda x: probe(lax.reduce_sum(x, (0,), out_sharding=P(None, unreduced={"Y"}))),
     [(f32(8, 4), ["X", None])], error=True)

# Shape ops.
case("transpose", "lax.transpose(x, (1, 0))", lambda x: probe(lax.transpose(x, (1, 0))), [(f32(8, 4), ["X", "Y"])])
case("transpose_3d", "lax.transpose(x, (2, 0, 1))", lambda x: probe(lax.transpose(x, (2, 0, 1))),
     [(f32(2, 3, 8), ["X", None, "Y"])])
case("broadcast_new_dim", "lax.broadcast_in_dim(x, (3, 4), (1,))", lambda x: probe(lax.broadcast_in_dim(x, (3, 4), (1,))),
     [(f32(4), ["Y"])])
case("broadcast_keep", "lax.broadcast_in_dim(x, (8, 2, 4), (0, 2))",
     lambda x: probe(lax.broadcast_in_dim(x, (8, 2, 4), (0, 2))), [(f32(8, 4), ["X", "Y"])])
case("reshape_split", "lax.reshape(x, (2, 4)) of [8@X]", lambda x: probe(lax.reshape(x, (2, 4))), [(f32(8), ["X"])])
case("reshape_split_two_axes", "lax.reshape(x, (2, 8)) of [16@(X,Y)]", lambda x: probe(lax.reshape(x, (2, 8))),
     [(f32(16), [["X", "Y"]])])
case("reshape_split_minor", "lax.reshape(x, (2, 4, 4)) of [8@X,4@Y]", lambda x: probe(lax.reshape(x, (2, 4, 4))),
     [(f32(8, 4), ["X", "Y"])])
case("reshape_split_indivisible", "lax.reshape(x, (2, 4)) of [8@Y]", lambda x: probe(lax.reshape(x, (2, 4))),
     [(f32(8), ["Y"])], error=True)
case("reshape_merge", "lax.reshape(x, (16,)) of [4@X,4]", lambda x: probe(lax.reshape(x, (16,))), [(f32(4, 4), ["X", None])])
case("reshape_merge_both", "lax.reshape(x, (32,)) of [8@X,4@Y]", lambda x: probe(lax.reshape(x, (32,))),
     [(f32(8, 4), ["X", "Y"])])
case("reshape_merge_minor", "lax.reshape(x, (16,)) of [4,4@X]", lambda x: probe(lax.reshape(x, (16,))),
     [(f32(4, 4), [None, "X"])], error=True)
case("reshape_add_one", "lax.reshape(x, (8, 1, 4))", lambda x: probe(lax.reshape(x, (8, 1, 4))), [(f32(8, 4), ["X", "Y"])])
case("reshape_drop_one", "lax.reshape(x, (8, 4)) of [8@X,1,4@Y]", lambda x: probe(lax.reshape(x, (8, 4))),
     [(f32(8, 1, 4), ["X", None, "Y"])])
case("reshape_replicated", "lax.reshape(x, (4, 8))", lambda x: probe(lax.reshape(x, (4, 8))), [(f32(8, 4), [])])
case("reshape_two_splits", "lax.reshape(x, (2, 4, 2, 2)) of [8@X,4]", lambda x: probe(lax.reshape(x, (2, 4, 2, 2))),
     [(f32(8, 4), ["X", None])], error=True)
case("reshape_out", "lax.reshape(x, (2, 4), out_sharding=P(None, 'Y'))",
     lambda x: probe(lax.reshape(x, (2, 4), out_sharding=P(None, "Y"))), [(f32(8), ["Y"])])
case("slice_even", "lax.slice(x, (0, 0), (4, 4))", lambda x: probe(lax.slice(x, (0, 0), (4, 4))), [(f32(8, 4), ["X", "Y"])])
case("slice_unsharded_dim", "lax.slice(x, (0, 1), (8, 3)) of [8@X,4]", lambda x: probe(lax.slice(x, (0, 1), (8, 3))),
     [(f32(8, 4), ["X", None])])
case("slice_indivisible", "lax.slice(x, (0, 0), (3, 4)) of [8@X,4]", lambda x: probe(lax.slice(x, (0, 0), (3, 4))),
     [(f32(8, 4), ["X", None])], error=True)
case("slice_to_one", "lax.slice(x, (2, 1), (3, 2)) of [8@X,4@Y]", lambda x: probe(lax.slice(x, (2, 1), (3, 2))),
     [(f32(8, 4), ["X", "Y"])])
case("concat_same", "lax.concatenate([x, y], 1)", lambda x, y: probe(lax.concatenate([x, y], 1)),
     [(f32(8, 4), ["X", None]), (f32(8, 4), ["X", None])])
case("concat_mismatch", "lax.concatenate([x, y], 0), P('X') and P()", lambda x, y: probe(lax.concatenate([x, y], 0)),
     [(f32(8, 4), ["X", None]), (f32(8, 4), [])], error=True)
case("rev", "lax.rev(x, (0,))", lambda x: probe(lax.rev(x, (0,))), [(f32(8, 4), ["X", "Y"])])
case("sort_unsharded_dim", "lax.sort(x, dimension=1) of [8@X,4]", lambda x: probe(lax.sort(x, dimension=1)),
     [(f32(8, 4)[:, ::-1].copy(), ["X", None])])
case("sort_sharded_dim", "lax.sort(x, dimension=0) of [8@X,4]", lambda x: probe(lax.sort(x, dimension=0)),
     [(f32(8, 4), ["X", None])], error=True)
case("cumsum_unsharded_dim", "lax.cumsum(x, axis=1) of [8@X,4]", lambda x: probe(lax.cumsum(x, axis=1)),
     [(f32(8, 4), ["X", None])])
case("cumsum_sharded_dim", "lax.cumsum(x, axis=0) of [8@X,4@Y]", lambda x: probe(lax.cumsum(x, axis=0)),
     [(f32(8, 4), ["X", "Y"])], error=True)
case("iota_replicated", "lax.broadcasted_iota(float32, (8, 4), 0) + x",
     lambda x: probe(lax.add(probe(lax.broadcasted_iota(np.float32, (8, 4), 0)), x)), [(f32(8, 4), ["X", None])])
case("iota_out", "lax.broadcasted_iota(float32, (8, 4), 1, out_sharding=P('X', 'Y')) + x",
     lambda x: probe(lax.add(probe(lax.broadcasted_iota(np.float32, (8, 4), 1, out_sharding=P("X", "Y"))), x)),
     [(f32(8, 4), [])])

# reshard and with_sharding_constraint.
case("reshard", "jax.sharding.reshard(x, P('Y', 'X'))", lambda x: probe(jax.sharding.reshard(x, P("Y", "X"))),
     [(f32(8, 4), ["X", "Y"])])
case("reshard_short_spec", "jax.sharding.reshard(x, P('Y'))", lambda x: probe(jax.sharding.reshard(x, P("Y"))),
     [(f32(8, 4), ["X", None])])
case("reshard_then_dot", "dot of x resharded to P(None, None) (out of a both-sharded contraction)",
     lambda x, y: probe(lax.dot_general(probe(jax.sharding.reshard(x, P())), y, DOT)),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])])
case("wsc_assert_match", "jax.lax.with_sharding_constraint(x, P('X', 'Y')) on an all-Explicit mesh (no op)",
     lambda x: probe(lax.neg(jax.lax.with_sharding_constraint(x, P("X", "Y")))), [(f32(8, 4), ["X", "Y"])])
case("wsc_assert_mismatch", "jax.lax.with_sharding_constraint(x, P('Y', None)) of [8@X,4@Y]",
     lambda x: probe(jax.lax.with_sharding_constraint(x, P("Y", None))), [(f32(8, 4), ["X", "Y"])], error=True)

# A mesh with an Auto axis: types hold the Explicit axes only; constraints are open.
case("mixed_type", "lax.mul(x, x) of P('X', 'Y'), Y Auto", lambda x: probe(lax.mul(probe(x), x)),
     [(f32(8, 4), ["X", "Y"])], mesh=MIXED)
case("mixed_unused_explicit", "lax.neg(x) of P(None, 'Y'), Y Auto (X replicated)", lambda x: probe(lax.neg(probe(x))),
     [(f32(8, 4), [None, "Y"])], mesh=MIXED)
case("mixed_dot", "lax.dot_general(x, y), X Explicit, Y Auto", lambda x, y: probe(lax.dot_general(x, y, DOT)),
     [(f32(8, 4), ["X", None]), (f32(4, 16), [None, "Y"])], mesh=MIXED)
case("mixed_wsc_auto", "with_sharding_constraint(x, P(None, 'Y')), Y Auto",
     lambda x: probe(lax.neg(jax.lax.with_sharding_constraint(x, P(None, "Y")))), [(f32(8, 4), ["X", None])], mesh=MIXED)
case("mixed_wsc_explicit", "with_sharding_constraint(x, P('X')), X Explicit: refused",
     lambda x: probe(jax.lax.with_sharding_constraint(x, P("X"))), [(f32(8, 4), ["X", None])], mesh=MIXED, error=True)

# More shape ops: pad, dynamic_slice, dynamic_update_slice, clamp, argmax, top_k, reduce_window.
case("pad_unsharded_dim", "lax.pad(x, 0, [(0, 0, 0), (1, 2, 0)]) of [8@X,4]",
     lambda x, z: probe(lax.pad(x, z, [(0, 0, 0), (1, 2, 0)])), [(f32(8, 4), ["X", None]), (np.float32(0), [])])
case("pad_even", "lax.pad(x, 0, [(2, 2, 0), (0, 0, 0)]) of [8@X,4@Y]",
     lambda x, z: probe(lax.pad(x, z, [(2, 2, 0), (0, 0, 0)])), [(f32(8, 4), ["X", "Y"]), (np.float32(0), [])])
case("pad_indivisible", "lax.pad(x, 0, [(1, 0, 0), (0, 0, 0)]) of [8@X,4]",
     lambda x, z: probe(lax.pad(x, z, [(1, 0, 0), (0, 0, 0)])), [(f32(8, 4), ["X", None]), (np.float32(0), [])], error=True)
case("dynamic_slice", "lax.dynamic_slice(x, (i, j), (8, 2)) of [8@X,4]",
     lambda x, i, j: probe(lax.dynamic_slice(x, (i, j), (8, 2))),
     [(f32(8, 4), ["X", None]), (np.int32(0), []), (np.int32(1), [])], scalar_constraints=False)
case("dynamic_slice_indivisible", "lax.dynamic_slice(x, (i, j), (3, 4)) of [8@X,4]",
     lambda x, i, j: probe(lax.dynamic_slice(x, (i, j), (3, 4))),
     [(f32(8, 4), ["X", None]), (np.int32(2), []), (np.int32(0), [])], error=True)
case("dynamic_update_slice", "lax.dynamic_update_slice(x, u, (i, j)), both P('X')",
     lambda x, u, i, j: probe(lax.dynamic_update_slice(x, u, (i, j))),
     [(f32(8, 4), ["X", None]), (f32(8, 2) * 10, ["X", None]), (np.int32(0), []), (np.int32(1), [])], scalar_constraints=False)
case("dynamic_update_slice_mismatch", "lax.dynamic_update_slice(x, u, (i, j)), P('X') and P()",
     lambda x, u, i, j: probe(lax.dynamic_update_slice(x, u, (i, j))),
     [(f32(8, 4), ["X", None]), (f32(8, 2), []), (np.int32(0), []), (np.int32(1), [])], error=True)
case("clamp", "lax.clamp(lo, x, hi), x P('X', 'Y'), bounds P()",
     lambda lo, x, hi: probe(lax.clamp(lo, x, hi)),
     [(np.full((8, 4), -2, np.float32), []), (f32(8, 4), ["X", "Y"]), (np.full((8, 4), 5, np.float32), [])])
case("argmax_sharded_dim", "lax.argmax(x, 0, int32) of [8@X,4@Y]", lambda x: probe(lax.argmax(x, 0, np.int32)),
     [(f32(8, 4)[::-1].copy(), ["X", "Y"])])
case("argmin_dim1", "lax.argmin(x, 1, int32) of [8@X,4@Y]", lambda x: probe(lax.argmin(x, 1, np.int32)),
     [(f32(8, 4), ["X", "Y"])])
case("top_k", "lax.top_k(x, 2) of [8@X,4]", lambda x: tuple(probe(v) for v in lax.top_k(x, 2)),
     [(f32(8, 4)[:, ::-1].copy(), ["X", None])])
case("top_k_sharded_axis", "lax.top_k(x, 2) of [8,4@Y]", lambda x: tuple(probe(v) for v in lax.top_k(x, 2)),
     [(f32(8, 4), [None, "Y"])], error=True)
case("reduce_window_max", "lax.reduce_window(x, -inf, lax.max, (1, 2), (1, 2), 'VALID') of [8@X,4]",
     lambda x: probe(lax.reduce_window(x, -np.inf, lax.max, (1, 2), (1, 2), "VALID")), [(f32(8, 4), ["X", None])])
case("reduce_window_indivisible", "lax.reduce_window(x, 0, lax.add, (4, 1), (4, 1), 'VALID') of [8@Y,4]",
     lambda x: probe(lax.reduce_window(x, np.float32(0), lax.add, (4, 1), (4, 1), "VALID")), [(f32(8, 4), ["Y", None])],
     error=True)

# Control flow: a loop's carry and a cond's branches keep their types.
case("while_carry", "lax.while_loop(c[0] < 3, (c[0] + 1, c[1] * y), (0, x))[1]",
     lambda x, y: probe(lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, probe(lax.mul(c[1], y))), (0, x))[1]),
     [(f32(8, 4) / 4, ["X", None]), (f32(8, 4) / 8, ["X", None])], scalar_constraints=False)
case("while_carry_changes_type", "lax.while_loop whose body reshards its carry",
     lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jax.sharding.reshard(c[1], P(None, "Y"))), (0, x))[1],
     [(f32(8, 4), ["X", None])], error=True, first_line=True)
case("fori_loop", "lax.fori_loop(0, 3, lambda i, c: c * y, x)",
     lambda x, y: probe(lax.fori_loop(0, 3, lambda i, c: probe(lax.mul(c, y)), x)),
     [(f32(8, 4) / 4, [None, "Y"]), (f32(8, 4) / 8, [])], scalar_constraints=False)
case("fori_loop_changes_type", "lax.fori_loop whose body reshards its carry",
     lambda x: lax.fori_loop(0, 3, lambda i, c: jax.sharding.reshard(c, P(None, "Y")), x),
     [(f32(8, 4), ["X", None])], error=True, first_line=True)
case("scan", "lax.scan(lambda c, x: (c + x, -c), c0, xs), c0 [8@X], xs [4,8@X]",
     lambda c0, xs: tuple(probe(v) for v in lax.scan(lambda c, x: (probe(lax.add(probe(c), probe(x))), probe(lax.neg(c))), c0, xs)),
     [(f32(8), ["X"]), (f32(4, 8), [None, "X"])], own_lowering=True)
case("scan_carry_changes_type", "lax.scan whose body reshards its carry",
     lambda c0, xs: lax.scan(lambda c, x: (jax.sharding.reshard(lax.add(c, x), P()), c), c0, xs)[0],
     [(f32(8), ["X"]), (f32(4, 8), [None, "X"])], error=True, first_line=True)
case("cond", "lax.cond(p, lambda: x * y, lambda: -x)",
     lambda p, x, y: probe(lax.cond(p, lambda: probe(lax.mul(x, y)), lambda: probe(lax.neg(x)))),
     [(np.bool_(True), []), (f32(8, 4), ["X", None]), (f32(8, 4), ["X", None])], scalar_constraints=False)
case("cond_false", "lax.cond(p, lambda: x * y, lambda: -x), p false",
     lambda p, x, y: probe(lax.cond(p, lambda: lax.mul(x, y), lambda: lax.neg(x))),
     [(np.bool_(False), []), (f32(8, 4), ["X", "Y"]), (f32(8, 4), ["X", "Y"])], scalar_constraints=False)
case("cond_branches_differ", "lax.cond(p, lambda: x, lambda: y), x P('X'), y P(None, 'Y')",
     lambda p, x, y: lax.cond(p, lambda: lax.neg(x), lambda: lax.neg(y)),
     [(np.bool_(True), []), (f32(8, 4), ["X", None]), (f32(8, 4), [None, "Y"])], error=True, first_line=True)

# auto_axes and explicit_axes: a region of the program where axes change type.
AUTO = {"shape": [2, 4], "names": ["X", "Y"], "types": ["Auto", "Auto"]}


def _add_probed(a, b):
    return probe(lax.add(probe(a), probe(b)))


case("auto_axes_all", "auto_axes(lambda a, b: a + b, out_sharding=P('X', None))(x, y), x P('X'), y P(None, 'X')",
     lambda x, y: probe(auto_axes(_add_probed, out_sharding=P("X", None))(x, y)),
     [(f32(4, 4), ["X", None]), (f32(4, 4), [None, "X"])])
case("auto_axes_x", "auto_axes(lambda a: -a, axes='X', out_sharding=P('X', 'Y'))(x) of [8@X,4@Y]",
     lambda x: probe(auto_axes(lambda a: probe(lax.neg(probe(a))), axes="X", out_sharding=P("X", "Y"))(x)),
     [(f32(8, 4), ["X", "Y"])])
case("auto_axes_take", "auto_axes(lambda a, i: jnp.take(a, i, axis=0), out_sharding=P('X'))(x, i): a gather, which has no rule here",
     lambda x, i: probe(auto_axes(lambda a, j: jnp.take(a, j, axis=0, mode="clip"), out_sharding=P("X", None))(x, i)),
     [(f32(8, 4), ["X", "Y"]), (np.array([7, 0, 3, 3, 1, 2, 6, 5], np.int32), [])])
case("auto_axes_no_out", "auto_axes(lambda a: -a)(x) without out_sharding",
     lambda x: auto_axes(lambda a: lax.neg(a))(x), [(f32(8, 4), ["X", "Y"])], error=True)
case("explicit_axes_all", "explicit_axes(lambda a: -a, in_sharding=P('X', None))(x) on a mesh of Auto axes",
     lambda x: explicit_axes(lambda a: probe(lax.neg(probe(a))), in_sharding=P("X", None))(x),
     [(f32(8, 4), ["X", "Y"])], mesh=AUTO)
case("explicit_axes_x", "explicit_axes(lambda a: -a, axes='X', in_sharding=P('X', None))(x) on a mesh of Auto axes",
     lambda x: explicit_axes(lambda a: probe(lax.neg(probe(a))), axes="X", in_sharding=P("X", None))(x),
     [(f32(8, 4), ["X", "Y"])], mesh=AUTO)

# shard_map under sharding in types: in_specs inferred from the arguments' types, bodies typed
# per device with the manual axes they vary over.
def _psum_x(b):
    probe(b)
    return probe(lax.psum(b, "X"))


case("shard_map_infer", "jax.shard_map(lambda b: lax.psum(b, 'X'), out_specs=P(None, 'Y'))(x), in_specs inferred",
     lambda x: probe(jax.shard_map(_psum_x, out_specs=P(None, "Y"))(x)), [(f32(8, 4), ["X", "Y"])])
case("shard_map_given", "jax.shard_map(lambda b: lax.psum(b, 'X'), in_specs=P('X', 'Y'), out_specs=P(None, 'Y'))(x)",
     lambda x: probe(jax.shard_map(_psum_x, in_specs=P("X", "Y"), out_specs=P(None, "Y"))(x)), [(f32(8, 4), ["X", "Y"])])
case("shard_map_in_specs_differ", "jax.shard_map(..., in_specs=P('Y', None))(x) of [8@X,4@Y]",
     lambda x: jax.shard_map(_psum_x, in_specs=P("Y", None), out_specs=P(None, "Y"))(x), [(f32(8, 4), ["X", "Y"])],
     error=True)
case("shard_map_all_gather", "jax.shard_map(lambda b: lax.all_gather(b * b, 'Y', axis=1, tiled=True), out_specs=P('X', 'Y'))(x)",
     lambda x: probe(jax.shard_map(lambda b: probe(lax.all_gather(probe(lax.mul(b, b)), "Y", axis=1, tiled=True)),
                                   out_specs=P("X", "Y"))(x)), [(f32(8, 4), ["X", "Y"])])
case("shard_map_then_dot", "a shard_map's result (typed by out_specs) in a dot",
     lambda x, w: probe(lax.dot_general(jax.shard_map(lambda b: lax.neg(b), out_specs=P("X", None))(x), w, DOT)),
     [(f32(8, 4), ["X", None]), (f32(4, 16), [None, "Y"])])

# gather (lax.gather with the index vector as the last dimension, indices in bounds).
ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
COLS = lax.GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,))
PROMISE = lax.GatherScatterMode.PROMISE_IN_BOUNDS
IDX = np.array([[7], [0], [3]], np.int32)
case("gather_rows", "lax.gather(x, i, rows, (1, 4)) of [8,4@Y]",
     lambda x, i: probe(lax.gather(x, i, ROWS, (1, 4), mode=PROMISE)), [(f32(8, 4), [None, "Y"]), (IDX, [])])
case("gather_cols", "lax.gather(x, i, columns, (8, 1)) of [8@X,4]",
     lambda x, i: probe(lax.gather(x, i, COLS, (8, 1), mode=PROMISE)), [(f32(8, 4), ["X", None]), (IDX % 4, [])])
case("gather_indexed_dim_sharded", "lax.gather(x, i, rows, (1, 4)) of [8@X,4]",
     lambda x, i: probe(lax.gather(x, i, ROWS, (1, 4), mode=PROMISE)), [(f32(8, 4), ["X", None]), (IDX, [])], error=True)
case("gather_indices_sharded", "lax.gather(x, i, rows, (1, 4)), i P('X')",
     lambda x, i: probe(lax.gather(x, i, ROWS, (1, 4), mode=PROMISE)),
     [(f32(8, 4), []), (np.array([[7], [0], [3], [1]], np.int32), ["X", None])], error=True)
case("gather_replicated", "lax.gather(x, i, rows, (1, 4)), all replicated",
     lambda x, i: probe(lax.gather(x, i, ROWS, (1, 4), mode=PROMISE)), [(f32(8, 4), []), (IDX, [])])

# Variants of the rules above, one op family at a time.
XY = (f32(8, 4), ["X", "Y"])
XN = (f32(8, 4), ["X", None])
NY = (f32(8, 4), [None, "Y"])
POS = (f32(8, 4) + 12, ["X", "Y"])
case("div", "lax.div(x, y)", lambda x, y: probe(lax.div(x, y)), [XN, POS])
case("pow", "lax.pow(x, y)", lambda x, y: probe(lax.pow(x, y)), [(f32(8, 4) / 8 + 3, ["X", None]), (f32(8, 4) / 16, [None, "Y"])])
case("rem", "lax.rem(x, y)", lambda x, y: probe(lax.rem(x, y)), [XY, (f32(8, 4) % 5 + 1, ["X", "Y"])])
case("atan2", "lax.atan2(x, y)", lambda x, y: probe(lax.atan2(x, y)), [XN, (f32(8, 4) + 1, [])])
case("and_or", "lax.bitwise_or(lax.bitwise_and(a, b), b) of bools",
     lambda a, b: probe(lax.bitwise_or(probe(lax.bitwise_and(a, b)), b)),
     [(f32(8, 4) > 0, ["X", None]), (f32(8, 4) % 3 == 0, [None, "Y"])])
case("not", "lax.bitwise_not(a) of bools", lambda a: probe(lax.bitwise_not(a)), [(f32(8, 4) > 0, ["X", "Y"])])
case("sqrt_log", "lax.log(lax.sqrt(x))", lambda x: probe(lax.log(probe(lax.sqrt(x)))), [POS])
case("tanh_exp", "lax.exp(lax.tanh(x))", lambda x: probe(lax.exp(probe(lax.tanh(x)))), [(f32(8, 4) / 8, [None, "Y"])])
case("floor_neg", "lax.neg(lax.floor(x))", lambda x: probe(lax.neg(probe(lax.floor(x)))), [(f32(8, 4) / 3, ["X", "Y"])])
case("compare_eq_int", "lax.eq(a, b) of int32", lambda a, b: probe(lax.eq(a, b)),
     [(np.arange(32, dtype=np.int32).reshape(8, 4) % 3, ["X", None]), (np.arange(32, dtype=np.int32).reshape(8, 4) % 2, [])])
case("select_scalar_pred", "lax.select(p, x, y) with a scalar p", lambda p, x, y: probe(lax.select(p, x, y)),
     [(np.bool_(False), []), XY, (f32(8, 4) * 2, ["X", "Y"])])
case("max_3d", "lax.max(x, y) of [2@X,4,8@Y] and [2,4,8]", lambda x, y: probe(lax.max(x, y)),
     [(f32(2, 4, 8), ["X", None, "Y"]), (f32(2, 4, 8)[::-1].copy(), [])])
case("add_incompatible_multi", "lax.add(x, y), P(('X', 'Y')) + P('Y')", lambda x, y: probe(lax.add(x, y)),
     [(f32(16, 2), [["X", "Y"]]), (f32(16, 2), ["Y"])], error=True)
case("dot_vector_matrix", "lax.dot_general(v, w) [4@X]·[4,8@Y]", lambda v, w: probe(lax.dot_general(v, w, (((0,), (0,)), ((), ())))),
     [(f32(4), ["X"]), (f32(4, 8), [None, "Y"])])
case("dot_matrix_vector", "lax.dot_general(w, v) [8@X,4]·[4]", lambda w, v: probe(lax.dot_general(w, v, DOT)),
     [XN, (f32(4), [])])
case("dot_batch_unreduced", "lax.dot_general(x, y, batch, out_sharding=P('X', None, None, unreduced={'Y'})), then reshard",
     lambda x, y: probe(jax.sharding.reshard(probe(lax.dot_general(x, y, BDOT, out_sharding=P("X", None, None, unreduced={"Y"}))), P("X"))),
     [(f32(2, 8, 4), ["X", None, "Y"]), (f32(2, 4, 16), ["X", "Y", None])])
case("dot_two_free_same_axis", "lax.dot_general(x, y) [8@Y,4]·[4,16@Y]", lambda x, y: probe(lax.dot_general(x, y, DOT)),
     [(f32(8, 4), ["Y", None]), (f32(4, 16), [None, "Y"])], error=True)
case("prod_dim0", "lax.reduce_prod(x, (0,)) of [8@X,4@Y]", lambda x: probe(lax.reduce_prod(x, (0,))), [(f32(8, 4) / 16 + 1, ["X", "Y"])])
case("sum_dim1", "lax.reduce_sum(x, (1,)) of [8@X,4@Y]", lambda x: probe(lax.reduce_sum(x, (1,))), [XY])
case("sum_3d_two_dims", "lax.reduce_sum(x, (0, 2)) of [2@X,4,8@Y]", lambda x: probe(lax.reduce_sum(x, (0, 2))),
     [(f32(2, 4, 8), ["X", None, "Y"])])
case("reshape_merge_multi", "lax.reshape(x, (32,)) of [8@(X,Y),4]", lambda x: probe(lax.reshape(x, (32,))),
     [(f32(8, 4), [["X", "Y"], None])])
case("reshape_split_three", "lax.reshape(x, (2, 2, 4)) of [16@X]", lambda x: probe(lax.reshape(x, (2, 2, 4))), [(f32(16), ["X"])])
case("reshape_out_merge", "lax.reshape(x, (32,), out_sharding=P('Y')) of [8,4@Y]",
     lambda x: probe(lax.reshape(x, (32,), out_sharding=P("Y"))), [NY])
case("transpose_multi_axes", "lax.transpose(x, (1, 0)) of [16@(X,Y),2]", lambda x: probe(lax.transpose(x, (1, 0))),
     [(f32(16, 2), [["X", "Y"], None])])
case("broadcast_3d", "lax.broadcast_in_dim(x, (2, 8, 4), (1, 2)) of [8@X,4@Y]",
     lambda x: probe(lax.broadcast_in_dim(x, (2, 8, 4), (1, 2))), [XY])
case("concat_three", "lax.concatenate([x, y, z], 0), all P(None, 'Y')", lambda x, y, z: probe(lax.concatenate([x, y, z], 0)),
     [NY, NY, NY])
case("slice_strided", "lax.slice(x, (0, 0), (8, 4), (1, 2)) of [8@X,4]", lambda x: probe(lax.slice(x, (0, 0), (8, 4), (1, 2))), [XN])
case("rev_both", "lax.rev(x, (0, 1))", lambda x: probe(lax.rev(x, (0, 1))), [XY])
case("mixed_sum", "lax.reduce_sum(x, (1,)) of P('X', 'Y'), Y Auto", lambda x: probe(lax.reduce_sum(x, (1,))), [XY], mesh=MIXED)
case("mixed_reshape", "lax.reshape(x, (2, 4, 4)) of P('X'), Y Auto", lambda x: probe(lax.reshape(x, (2, 4, 4))), [XN], mesh=MIXED)
case("mixed_transpose", "lax.transpose(x, (1, 0)) of P('X', 'Y'), Y Auto", lambda x: probe(lax.transpose(x, (1, 0))), [XY], mesh=MIXED)
case("sub_unreduced", "partial sums subtracted, then resharded to P()",
     lambda x, y: probe(jax.sharding.reshard(probe(lax.sub(partial_sum(x, y), partial_sum(x, y))), P())),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])])
case("neg_unreduced", "lax.neg of a partial sum keeps it unreduced",
     lambda x, y: probe(jax.sharding.reshard(probe(lax.neg(partial_sum(x, y))), P())),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])])
case("transpose_unreduced", "lax.transpose of a partial sum keeps it unreduced",
     lambda x, y: probe(jax.sharding.reshard(probe(lax.transpose(partial_sum(x, y), (1, 0))), P())),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])])
case("reshape_unreduced", "lax.reshape of a partial sum keeps it unreduced",
     lambda x, y: probe(jax.sharding.reshard(probe(lax.reshape(partial_sum(x, y), (128,))), P())),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", None])])

# scatter (lax.scatter_add, the index vector as the last dimension, indices in bounds).
SROWS = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
case("scatter_rows", "lax.scatter_add(x, i, u, rows) of [8,4@Y], u [3,4@Y]",
     lambda x, i, u: probe(lax.scatter_add(x, i, u, SROWS, mode=PROMISE)), [(f32(8, 4), [None, "Y"]), (IDX, []), (f32(3, 4), [None, "Y"])])
case("scatter_updates_sharded_alone", "lax.scatter_add(x, i, u, rows) of [8,4], u [3,4@Y]",
     lambda x, i, u: probe(lax.scatter_add(x, i, u, SROWS, mode=PROMISE)), [(f32(8, 4), []), (IDX, []), (f32(3, 4), [None, "Y"])],
     error=True)
case("scatter_inserted_dim_sharded", "lax.scatter_add(x, i, u, rows) of [8@X,4]",
     lambda x, i, u: probe(lax.scatter_add(x, i, u, SROWS, mode=PROMISE)), [(f32(8, 4), ["X", None]), (IDX, []), (f32(3, 4), [])],
     error=True)
case("scatter_window_differs", "lax.scatter_add(x, i, u, rows) of [8,4@Y], u [3,4]",
     lambda x, i, u: probe(lax.scatter_add(x, i, u, SROWS, mode=PROMISE)), [(f32(8, 4), [None, "Y"]), (IDX, []), (f32(3, 4), [])],
     error=True)
case("scatter_replicated", "lax.scatter_add(x, i, u, rows), all replicated",
     lambda x, i, u: probe(lax.scatter_add(x, i, u, SROWS, mode=PROMISE)), [(f32(8, 4), []), (IDX, []), (f32(3, 4), [])])
case("shard_map_pcast", "jax.shard_map(lambda b: lax.psum(lax.pcast(b, 'X', to='varying'), 'X'), out_specs=P(None, 'Y'))(x)",
     lambda x: probe(jax.shard_map(lambda b: probe(lax.psum(probe(lax.pcast(probe(b), "X", to="varying")), "X")),
                                   out_specs=P(None, "Y"))(x)), [(f32(8, 4), [None, "Y"])])
case("grad_shard_map_pcast", "value_and_grad(sum(shard_map(psum(pcast(b, 'X'), 'X') * b)))",
     lambda x: lax.reduce_sum(jax.shard_map(lambda b: lax.mul(lax.psum(lax.pcast(b, "X", to="varying"), "X"), b),
                                            out_specs=P("X", "Y"))(x), (0, 1)),
     [(f32(8, 4) / 8, [None, "Y"])], grad=True)
case("zeros_out", "jnp.zeros((8, 4), out_sharding=P('X', 'Y')) + x",
     lambda x: probe(lax.add(probe(jnp.zeros((8, 4), jnp.float32, out_sharding=P("X", "Y"))), x)), [(f32(8, 4), [])])
case("full_out_row", "jnp.full((8, 4), 2.5, out_sharding=P(None, 'Y')) * x",
     lambda x: probe(lax.mul(probe(jnp.full((8, 4), 2.5, jnp.float32, out_sharding=P(None, "Y"))), x)), [(f32(8, 4), [None, "Y"])])

# jnp.einsum with out_sharding: one dot_general, possibly transposed after.
case("einsum_free", "jnp.einsum('ij,jk->ik', x, y) [8@X,4]·[4,16@Y]", lambda x, y: probe(jnp.einsum("ij,jk->ik", x, y)),
     [(f32(8, 4), ["X", None]), (f32(4, 16), [None, "Y"])])
case("einsum_out", "jnp.einsum('ij,jk->ik', x, y, out_sharding=P('X', 'Y')), contracting sharded on both sides",
     lambda x, y: probe(jnp.einsum("ij,jk->ik", x, y, out_sharding=P("X", "Y"))),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", "Y"])])
case("einsum_out_batch", "jnp.einsum('bij,bjk->bik', x, y, out_sharding=P('X', None, 'Y'))",
     lambda x, y: probe(jnp.einsum("bij,bjk->bik", x, y, out_sharding=P("X", None, "Y"))),
     [(f32(2, 8, 4), ["X", None, "Y"]), (f32(2, 4, 16), ["X", "Y", None])])
case("einsum_needs_out", "jnp.einsum('ij,jk->ik', x, y), contracting sharded on both sides",
     lambda x, y: probe(jnp.einsum("ij,jk->ik", x, y)),
     [(f32(8, 4), [None, "X"]), (f32(4, 16), ["X", "Y"])], error=True)

# Gradients: jax.value_and_grad of a typed loss; each gradient has its parameter's type.
DIMS = (((1,), (0,)), ((), ()))


def mlp_loss(x, w1, w2):
    h = probe(jnp.tanh(probe(lax.dot_general(x, w1, DIMS))))
    y = probe(lax.dot_general(h, w2, DIMS, out_sharding=P("X", None)))
    return jnp.sum(y * y)


case("grad_mul_sum", "value_and_grad(sum(x * y)) of P('X', 'Y') and P('X')",
     lambda x, y: lax.reduce_sum(lax.mul(x, y), (0, 1)),
     [(f32(8, 4), ["X", "Y"]), (f32(8, 4), ["X", None])], grad=True)
case("grad_dot", "value_and_grad(sum(dot(x, w))) [8@X,4]·[4,16@Y]",
     lambda x, w: lax.reduce_sum(probe(lax.dot_general(x, w, DIMS)), (0, 1)),
     [(f32(8, 4), ["X", None]), (f32(4, 16), [None, "Y"])], grad=True)
case("grad_mlp", "value_and_grad of a 2-layer tanh MLP, w1 P(None, 'Y'), w2 P('Y', None), out_sharding=P('X', None)",
     mlp_loss, [(f32(8, 4) / 8, ["X", None]), (f32(4, 16) / 16, [None, "Y"]), (f32(16, 2) / 8, ["Y", None])], grad=True)
case("grad_fsdp", "value_and_grad with FSDP params P('X', None) resharded to P() before use",
     lambda x, w: lax.reduce_sum(lax.mul(*(2 * [probe(lax.dot_general(x, probe(jax.sharding.reshard(w, P())), DIMS))])), (0, 1)),
     [(f32(8, 4) / 8, ["X", None]), (f32(4, 16) / 16, ["X", None])], grad=True)
case("grad_reshape_transpose", "value_and_grad through reshape, transpose and broadcast",
     lambda x: lax.reduce_sum(lax.mul(probe(lax.transpose(probe(lax.reshape(x, (2, 4, 4))), (0, 2, 1))),
                                      lax.broadcast_in_dim(lax.reduce_sum(x, (0,)), (2, 4, 4), (1,))), (0, 1, 2)),
     [(f32(8, 4) / 8, ["X", "Y"])], grad=True)

# JAX 0.12 ends some errors with the caller's file and line (as in generate.py).
AT_SOURCE = re.compile(r" This error occurs at source: .*$", re.S)
# The constraints of @main's body (indented 4), not those inside regions such as sort's
# comparator, whose ops lower builds differently.
CONSTRAINT = re.compile(r"^    %[\w#]+ = sdy\.sharding_constraint %[\w#]+ (<@.*?>) :", re.M)
ARG = re.compile(r"%arg\d+: tensor<[^>]*> \{[^}]*?sdy\.sharding = #sdy\.sharding(<@[^>]*>)")
RESULT = re.compile(r"-> \((.*)\) \{\n")


def entries(text):
    head = text[text.index("func.func public @main"):]
    head = head[:head.index("{\n") + 2]
    sig, res = head.split(") -> ", 1) if ") -> " in head else (head, "")
    args = ARG.findall(sig + " ")
    results = re.findall(r"sdy\.sharding = #sdy\.sharding(<@[^>]*>)", res)
    return args, results


def generate():
    out = []
    for c in CASES:
        m = make(c["mesh"])
        rec = {"name": c["name"], "jax": c["jax"], "mesh": c["mesh"], "expect_error": c["error"],
               "inputs": [tensor(a) for a, _ in c["args"]], "specs": [s for _, s in c["args"]]}
        PROBES.clear()
        try:
            with jax.set_mesh(m):
                args = [jax.device_put(a, NamedSharding(m, spec(s))) for a, s in c["args"]]
                rec["arg_types"] = [str(jax.typeof(a)) for a in args]
                fn = with_grads(c["fn"], len(args)) if c["grad"] else c["fn"]
                rec["grad"] = c["grad"]
                rec["scalar_constraints"] = c["scalar_constraints"]
                rec["first_line"] = c["first_line"]
                rec["own_lowering"] = c["own_lowering"]
                lowered = jax.jit(fn).lower(*args)
                rec["types"] = list(PROBES)
                text = lowered.as_text()
                rec["constraints"] = CONSTRAINT.findall(text)
                rec["arg_shardings"], rec["result_shardings"] = entries(text)
                outs = jax.jit(fn)(*args)
            if not isinstance(outs, (tuple, list)):
                outs = (outs,)
            rec["outputs"] = [tensor(o) for o in outs]
            if c["error"]:
                raise ValueError("explicit: case %s: JAX raised no error" % c["name"])
        except Exception as e:  # noqa: BLE001 - JAX's error is the answer
            if not c["error"]:
                raise
            rec["first_line"] = c["first_line"]
            msg = AT_SOURCE.sub("", str(e))
            if c["first_line"]:
                msg = msg.split("\n")[0]  # the rest quotes the generator's source and path
            rec["error"] = {"class": type(e).__name__, "message": msg}
        out.append(rec)
    return out
