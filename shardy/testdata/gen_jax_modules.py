"""Regenerates jax_modules.json: StableHLO modules lowered by JAX with Shardy.

The modules exercise every sdy attribute form JAX emits (meshes with and
without device_ids, argument/result shardings, open dimensions from
UNCONSTRAINED, sharding constraints, full and partial-manual shard_map with
Explicit axes). parse_jax_test.go checks that each attribute in them parses
and prints back byte for byte. Run with the oracle venv:

    .cache/oracle-venv/bin/python shardy/testdata/gen_jax_modules.py
"""
import json
import os
import random
from functools import partial

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P


def strip_locs(text):
    return "\n".join(l for l in text.splitlines() if not l.startswith("#loc"))


def main():
    rng = random.Random(2)
    devs = np.array(jax.devices())
    modules = []

    def add(name, lowered):
        modules.append({"name": name, "text": lowered.as_text()})

    meshes = [((4, 2), ("x", "y")), ((2, 4), ("x", "y")), ((8,), ("x",)), ((2, 2, 2), ("x", "y", "z")),
              ((1, 8), ("a", "b"))]
    for shape, names in meshes:
        for order in ("iota", "perm"):
            ids = np.arange(8) if order == "iota" else np.array(rng.sample(range(8), 8))
            mesh = Mesh(devs[ids].reshape(shape), names)
            for trial in range(4):
                rank = rng.randint(0, 3)
                axes = list(names)
                rng.shuffle(axes)
                spec = [None] * rank
                for ax in axes[: rng.randint(0, len(axes))]:
                    if rank:
                        d = rng.randrange(rank)
                        spec[d] = (spec[d] or ()) + (ax,)
                s = NamedSharding(mesh, P(*spec))
                x = jax.ShapeDtypeStruct((8,) * rank, jnp.float32, sharding=s)
                add(f"jit {shape} {order} {spec}", jax.jit(lambda a: a * 2, out_shardings=s).lower(x))

    mesh = Mesh(devs.reshape(4, 2), ("x", "y"))
    x = jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(mesh, P("x")))

    def constrained(a):
        a = jax.lax.with_sharding_constraint(a * 2, NamedSharding(mesh, P(P.UNCONSTRAINED, "y")))
        return jax.lax.with_sharding_constraint(a + 1, NamedSharding(mesh, P(("x", "y"), P.UNCONSTRAINED)))

    add("constraints", jax.jit(constrained).lower(x))

    def body(a):
        return jax.lax.psum(a.sum(keepdims=True), "x")

    add("shard_map full", jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P(None, "y"))).lower(x))
    add("shard_map partial", jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P(),
                                                   axis_names={"x"})).lower(x))
    emesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto))
    ex = jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(emesh, P("x")))
    add("explicit+auto", jax.jit(lambda a: a * 2).lower(ex))
    emesh2 = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Explicit))
    ex2 = jax.ShapeDtypeStruct((8, 4), jnp.float32, sharding=NamedSharding(emesh2, P("x")))
    add("explicit shard_map", jax.jit(jax.shard_map(lambda a: a * 2, mesh=emesh2, in_specs=P("x"), out_specs=P("x"),
                                                    axis_names={"x"})).lower(ex2))

    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_modules.json")
    with open(out, "w") as f:
        json.dump({"jax": jax.__version__, "modules": modules}, f, indent=0)
        f.write("\n")
    print(f"wrote {len(modules)} modules to {out}")


if __name__ == "__main__":
    main()
