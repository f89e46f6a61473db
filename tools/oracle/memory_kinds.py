"""The memory_kinds group: JAX's memory kinds (NamedSharding.memory_kind), for mesh, lower and jit.

generate() returns the document generate.py writes to OUTDIR/memory_kinds.json:

- "reprs": NamedSharding reprs with and without memory kinds, over a concrete and an abstract
  4x2 mesh, and the errors of kinds no device can address (ValueError's text).
- "programs": jitted functions whose arguments or results live in host memory (pinned_host,
  unpinned_host) or device memory, on a 4x2 mesh of the 8 CPU devices: in_shardings and
  out_shardings carry the memory kinds. Each records JAX's lowered text
  (jax.jit(...).lower(...).as_text()), the inputs (pattern values, as vjp.py makes them) and
  each result's values, spec and memory kind after the call. (JAX 0.12 types a host-resident
  value as float32<host>[...] and refuses an op on operands of two memory spaces, so "mixed"
  keeps its host and device arguments apart.) A program with "after" runs on the
  results of the program it names (a device -> host -> device round trip).

- "placed": jitted functions that move values between memories inside the program
  (jax.device_put(x, jax.memory.Space.Host) and back, jax.device_put(x, a sharding in
  pinned_host) and back, and a value-and-grad step of a layer whose activation goes to host
  memory and back before its use, as an offloaded activation does), and a function run on the
  host (jax.experimental.compute_on.compute_on("device_host")). On CPU JAX lowers
  device_put inside jit to nothing, so the text recorded is JAX's lowering for GPUs
  (lower(lowering_platforms=("cuda",))), which places the values; the values are the CPU run's.

internal/oracletest/memory_kinds_test.go builds the same functions with package jit, compares
the @main signatures and the annotate_device_placement calls with JAX's text, byte for byte,
and runs them on the CPU PJRT plugin.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.compute_on import compute_on
from jax.sharding import AbstractMesh, NamedSharding, PartitionSpec as P

from vjp import arr, pattern

MESH = ((4, 2), ("x", "y"))

FUNCTIONS = {
    "mul2": lambda a: a * 2,
    "add1": lambda a: a + 1,
    "pair": lambda a, b: (a * 2, b + 1),
}


class MemoryKindsError(Exception):
    pass


def spec_of(entries):
    return P(*entries)


def reprs(mesh):
    am = AbstractMesh(*MESH)
    out = []
    for abstract in (False, True):
        m = am if abstract else mesh
        for kind in (None, "device", "pinned_host", "unpinned_host", "foo", "Device"):
            name = "%s_%s" % ("abstract" if abstract else "mesh", kind or "none")
            try:
                s = NamedSharding(m, P("x", None), memory_kind=kind)
                out.append({"name": name, "abstract": abstract, "memory_kind": kind, "repr": repr(s),
                            "kind_after": s.memory_kind})
            except ValueError as e:
                out.append({"name": name, "abstract": abstract, "memory_kind": kind, "error": str(e)})
    return out


def program(mesh, name, fn, specs, in_kinds, out_specs, out_kinds, inputs=None):
    shardings = [NamedSharding(mesh, spec_of(s), memory_kind=k) for s, k in zip(specs, in_kinds)]
    outs = tuple(NamedSharding(mesh, spec_of(s), memory_kind=k) for s, k in zip(out_specs, out_kinds))
    f = jax.jit(FUNCTIONS[fn], in_shardings=shardings, out_shardings=outs if len(outs) > 1 else outs[0])
    if inputs is None:
        inputs = [jax.device_put(pattern((8, 4), k + 1, 4), s) for k, s in enumerate(shardings)]
    text = f.lower(*inputs).as_text()
    res = f(*inputs)
    res = res if isinstance(res, tuple) else (res,)
    for r, o in zip(res, outs):
        if r.sharding.memory_kind != o.memory_kind:
            raise MemoryKindsError("%s: result in %s, want %s" % (name, r.sharding.memory_kind, o.memory_kind))
    case = {"name": name, "function": fn,
            "args": [{"spec": list(s), "memory_kind": k, **arr(np.asarray(x))}
                     for s, k, x in zip(specs, in_kinds, inputs)],
            "outs": [{"spec": list(s), "memory_kind": k} for s, k in zip(out_specs, out_kinds)],
            "text": text,
            "results": [{"memory_kind": r.sharding.memory_kind, **arr(np.asarray(r))} for r in res]}
    return case, res


@compute_on(compute_type="device_host", out_memory_spaces=jax.memory.Space.Device)
@jax.jit
def on_host(a):
    return a * 3


def compute_on_host(a):
    return on_host(a) + 1


def put_host_and_back(a):
    b = jax.device_put(a * 3, jax.memory.Space.Host)
    return jax.device_put(b, jax.memory.Space.Device) + 1


def offload_loss(w, a):
    h = jnp.sin(a @ w)
    h = jax.device_put(jax.device_put(h, jax.memory.Space.Host), jax.memory.Space.Device)
    return jnp.sum(h * h)


def placed(mesh):
    sh = NamedSharding(mesh, P("x", "y"))

    def device_put_sharding(a):
        b = jax.device_put(a * 3, sh.with_memory_kind("pinned_host"))
        return jax.device_put(b, sh) + 1

    x = jax.device_put(pattern((8, 4), 1, 4), sh)
    w = jax.device_put(pattern((4, 4), 2, 8), NamedSharding(mesh, P()))
    cases = [("put_host_and_back", put_host_and_back, [x]),
             ("device_put_sharding", device_put_sharding, [x]),
             ("offload_grad", jax.value_and_grad(offload_loss), [w, x]),
             ("compute_on_host", compute_on_host, [x])]
    out = []
    for name, fn, args in cases:
        f = jax.jit(fn)
        text = f.trace(*args).lower(lowering_platforms=("cuda",)).as_text()
        res = f(*args)
        res = res if isinstance(res, tuple) else (res,)
        out.append({"name": name, "function": name, "text": text,
                    "args": [{"spec": list(x.sharding.spec), **arr(np.asarray(x))} for x in args],
                    "results": [arr(np.asarray(r)) for r in res]})
    return out


def generate():
    mesh = jax.make_mesh(*MESH)
    xy = [["x", "y"]]
    progs = []
    for kind in ("pinned_host", "unpinned_host"):
        progs.append(program(mesh, "arg_" + kind, "mul2", xy, [kind], xy, [None])[0])
        progs.append(program(mesh, "result_" + kind, "mul2", xy, [None], xy, [kind])[0])
        progs.append(program(mesh, "both_" + kind, "add1", xy, [kind], xy, [kind])[0])
    progs.append(program(mesh, "all_device", "mul2", xy, ["device"], xy, ["device"])[0])
    progs.append(program(mesh, "mixed", "pair", [["x", "y"], ["x", None]], ["pinned_host", None],
                         [["x", "y"], [None, "y"]], [None, "pinned_host"])[0])
    # Device -> host -> device: the second program takes the first one's host-resident result.
    to_host, res = program(mesh, "round_trip_to_host", "mul2", xy, [None], xy, ["pinned_host"])
    back, _ = program(mesh, "round_trip_to_device", "add1", xy, ["pinned_host"], xy, [None], inputs=list(res))
    back["after"] = to_host["name"]
    progs += [to_host, back]
    return {"reprs": reprs(mesh), "programs": progs, "placed": placed(mesh)}
