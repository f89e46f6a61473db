"""Writes OUTDIR/export012.json: jax.export artifacts written by JAX 0.12 (serialization
version 12), with their inputs and JAX's outputs, for package jaxexport and jit's
FromExported tests.

generate.sh runs it in the oracle venv (JAX 0.12.0.1), after the other groups.

Programs: x*2 with named shardings on a 2x4 mesh; a shard_map psum over one mesh axis (mesh-axes
replica groups); a cpu+cuda export (a platform-index argument); x*2 with its result in pinned host
memory; an ordered effect, to be refused.
Inputs are np.arange grids, so the goldens stay small and exact.
"""

import base64
import json
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import export
from jax.sharding import NamedSharding, PartitionSpec as P

# No Python source locations in the modules: they would hold this file's absolute path, and the
# artifacts would differ between checkouts.
jax.config.update("jax_traceback_in_locations_limit", 0)

if jax.__version__ != "0.12.0.1":
    sys.exit(f"xlamesh: oracle: export012.py needs JAX 0.12.0.1, found {jax.__version__}")


def arr(x):
    x = np.asarray(x)
    return {"dtype": str(x.dtype), "shape": list(x.shape), "values": x.reshape(-1).tolist()}


def program(name, about, fn, mesh, in_specs, out_specs, inputs, platforms=None, run=True, disabled=(),
            out_memory=None):
    in_sh = tuple(NamedSharding(mesh, s) for s in in_specs)
    out_sh = tuple(NamedSharding(mesh, s, memory_kind=out_memory) for s in out_specs)
    j = jax.jit(fn, in_shardings=in_sh, out_shardings=out_sh if len(out_sh) > 1 else out_sh[0])
    args = [jax.device_put(x, s) for x, s in zip(inputs, in_sh)]
    kw = {} if platforms is None else {"platforms": platforms}
    if disabled:
        kw["disabled_checks"] = list(disabled)
    exp = export.export(j, **kw)(*args)
    outs = exp.call(*args) if run else j(*args)
    if not isinstance(outs, (tuple, list)):
        outs = [outs]
    return {
        "name": name,
        "about": about,
        "mesh": {"axes": list(mesh.axis_names), "shape": list(mesh.devices.shape),
                 "device_ids": [int(d.id) for d in mesh.devices.reshape(-1)]},
        "in_specs": [[a for a in s] for s in in_specs],
        "out_specs": [[a for a in s] for s in out_specs],
        "platforms": list(exp.platforms),
        "exported": base64.b64encode(exp.serialize()).decode(),
        "stablehlo": exp.mlir_module(),
        "inputs": [arr(x) for x in inputs],
        "outputs": [arr(o) for o in outs],
    }


def main(out):
    devs = np.array(jax.devices()[:8]).reshape(2, 4)
    mesh = jax.sharding.Mesh(devs, ("X", "Y"))
    x = np.arange(32, dtype=np.float32).reshape(8, 4) / 8
    progs = [
        program("times2_2x4", "x*2 with named shardings on a 2x4 mesh", lambda a: a * 2, mesh,
                [P("X", "Y")], [P("X", "Y")], [x]),
    ]

    def psum_body(a):
        return jax.lax.psum(a, "Y")

    smap = jax.shard_map(psum_body, mesh=mesh, in_specs=P("X", "Y"), out_specs=P("X", None))
    progs.append(program("shard_map_psum", "a shard_map psum over mesh axis Y", smap, mesh,
                         [P("X", "Y")], [P("X", None)], [x]))
    progs.append(program("times2_cpu_cuda", "x*2 exported for cpu and cuda", lambda a: a * 2 + 1,
                         mesh, [P("X", "Y")], [P("X", "Y")], [x], platforms=("cpu", "cuda")))
    progs.append(program("times2_cuda_tpu", "x*2 exported for cuda and tpu only", lambda a: a * 2,
                         mesh, [P("X", "Y")], [P("X", "Y")], [x], platforms=("cuda", "tpu"), run=False))

    # The result in pinned host memory: JAX lowers it to an annotate_device_placement custom call
    # and mhlo.memory_kind = "pinned_host" on the result.
    progs.append(program("times2_to_pinned_host", "x*2 with its result in pinned host memory", lambda a: a * 2,
                         mesh, [P("X", "Y")], [P("X", "Y")], [x], out_memory="pinned_host"))

    progs.append(program("times2_cuda_nocheck", "x*2 exported for cuda with its platform check disabled",
                         lambda a: a * 2, mesh, [P("X", "Y")], [P("X", "Y")], [x], platforms=("cuda",),
                         run=False, disabled=(export.DisabledSafetyCheck.platform(),)))

    # An ordered effect: jax.debug.print(ordered=True) threads a token through @main (one device:
    # JAX refuses ordered effects on more).
    def printing(a):
        jax.debug.print("x {}", a[0, 0], ordered=True)
        return a + 1

    try:
        one = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("X",))
        progs.append(program("ordered_effect", "an ordered jax.debug.print on one device", printing, one,
                             [P()], [P()], [x], run=False))
    except Exception as e:  # not exportable: say so in the golden
        print(f"export012: ordered_effect not exported: {e}", file=sys.stderr)

    doc = {
        "generator": "tools/oracle/export012.py",
        "group": "export012",
        "jax_version": jax.__version__,
        "jaxlib_version": jax.lib.__version__ if hasattr(jax.lib, "__version__") else "",
        "numpy_version": np.__version__,
        "programs": progs,
    }
    with open(os.path.join(out, "export012.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
