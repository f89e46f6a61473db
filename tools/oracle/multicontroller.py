"""The multi-controller golden: one jitted call over a mesh that spans 2 processes.

Run by generate.sh (group "multicontroller"). Starts 2 JAX processes on loopback
(jax.distributed.initialize, CPU collectives over gloo, 2 CPU devices each),
builds x = arange(32).reshape(8, 4) as float32 from each process's rows
(make_array_from_process_local_data, P("proc")), calls one jitted function on
the global mesh Mesh(("proc": 2, "x": 2)) and records, per process, the global
shape and sharding of each result and the shards the process holds: the mesh
position of the device, the index ([start, stop) per dimension) and the
values; then process_allgather of each result. Writes OUTDIR/multicontroller.json.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile

NUM_PROCESSES = 2
DEVICES_PER_PROCESS = 2


def body(jnp, x):
    # y: elementwise, stays sharded over "proc"; s: a sum over every shard (a cross-process
    # all-reduce); t: x^T x, a contraction over the sharded dimension.
    return x * 2.0 + 1.0, jnp.sum(x * x), x.T @ x


def child(pid, port, out):
    import jax
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.config.update("jax_num_cpu_devices", DEVICES_PER_PROCESS)
    jax.distributed.initialize(coordinator_address="127.0.0.1:%d" % port,
                               num_processes=NUM_PROCESSES, process_id=pid)
    import numpy as np
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from jax.experimental import multihost_utils

    devices = jax.devices()
    mesh = Mesh(np.array(devices).reshape(NUM_PROCESSES, DEVICES_PER_PROCESS), ("proc", "x"))
    position = {d.id: i for i, d in enumerate(mesh.devices.flat)}
    full = np.arange(32, dtype=np.float32).reshape(8, 4)
    rows = 8 // NUM_PROCESSES
    local = full[pid * rows:(pid + 1) * rows]
    sx = NamedSharding(mesh, P("proc"))
    x = jax.make_array_from_process_local_data(sx, local, (8, 4))
    outs = jax.jit(lambda x: body(jnp, x),
                   out_shardings=(NamedSharding(mesh, P("proc")), NamedSharding(mesh, P()),
                                  NamedSharding(mesh, P())))(x)
    results = []
    for r in outs:
        shards = []
        for s in sorted(r.addressable_shards, key=lambda s: position[s.device.id]):
            index = [[sl.start or 0, sl.stop if sl.stop is not None else r.shape[k]]
                     for k, sl in enumerate(s.index)]
            shards.append({"position": position[s.device.id], "index": index,
                           "data": np.asarray(s.data).reshape(-1).tolist()})
        spec = [None if a is None else a for a in r.sharding.spec]
        gathered = multihost_utils.process_allgather(r, tiled=True)
        results.append({"shape": list(r.shape), "spec": spec, "shards": shards,
                        "allgather": np.asarray(gathered).reshape(-1).tolist()})
    view = {"process": pid, "process_count": jax.process_count(),
            "addressable_positions": sorted(position[d.id] for d in jax.local_devices()),
            "results": results}
    with open(out, "w") as f:
        json.dump(view, f)
    jax.distributed.shutdown()


def main(outdir):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)  # the device count is set per process, above
    with tempfile.TemporaryDirectory() as tmp:
        files = [os.path.join(tmp, "p%d.json" % p) for p in range(NUM_PROCESSES)]
        procs = [subprocess.Popen([sys.executable, __file__, "--child", str(p), str(port), files[p]], env=env)
                 for p in range(NUM_PROCESSES)]
        for p in procs:
            if p.wait(timeout=300) != 0:
                sys.exit("multicontroller: a JAX process failed (exit %d)" % p.returncode)
        views = [json.load(open(f)) for f in files]
    import jax
    golden = {"meta": {"jax": jax.__version__, "processes": NUM_PROCESSES,
                       "devices_per_process": DEVICES_PER_PROCESS,
                       "collectives": "gloo",
                       "mesh": {"proc": NUM_PROCESSES, "x": DEVICES_PER_PROCESS},
                       "input": "arange(32, float32).reshape(8, 4), P('proc'), from process-local rows",
                       "function": "(x*2+1 out P('proc'), sum(x*x) out P(), x.T@x out P())"},
              "processes": views}
    from generate import dump  # the oracle's one deterministic JSON layout
    path = os.path.join(outdir, "multicontroller.json")
    with open(path, "w") as f:
        f.write(dump(golden) + "\n")
    print("multicontroller: wrote %s" % path)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    else:
        main(sys.argv[1])
