"""JAX counterparts of xlamesh's scale benchmarks (mesh/scale_bench_test.go,
lower/scale_bench_test.go): one round of tools/bench.sh's scale table (issue 31).

Each operation runs at 8, 512, 8,192 and 65,536 devices, named as the Go benchmark
BenchmarkScale<Op>/N=<devices>. The mesh is (N/8, 8) with axes ('x', 'y'), arrays (N, 16) sharded
P('x', 'y'). Mesh, sharding and geometry rows use fake Python devices (device i in process i // 8;
this process is 0), which JAX's pure-Python code accepts at any N; the lowering row needs real
devices, so it runs where N is at most the CPU device count (tools/bench.sh sets
XLA_FLAGS=--xla_force_host_platform_device_count=8192). JAX caches several of these results
(Mesh objects are interned, devices_indices_map and friends sit behind LRU caches): the uncached
function behind each cache (__wrapped__) is timed, as xlamesh computes the result every time.

Prints one line of JSON: {"ScaleOp/N=n": {"ns_per_op": ...} or {"error": ...}, "_jax_version": ...}.

usage: jax_scale.py [--min-time SECONDS] [--sizes 8,512,8192,65536] [--only Op,...]
"""
import argparse
import contextlib
import gc
import io
import json
import time
import tracemalloc

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def per_op(fn, min_time):
    """Warms up with one call, then calls fn until min_time seconds have passed; ns per call."""
    fn()
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / n * 1e9


class _Client:
    def process_index(self):
        return 0


class FakeDevice:
    platform = "cpu"
    device_kind = "cpu"
    client = _Client()

    def __init__(self, i):
        self.id = i
        self.process_index = i // 8

    def __repr__(self):
        return f"FakeDevice({self.id})"


def fake_mesh(devices, n):
    return Mesh(np.array(devices, dtype=object).reshape(n // 8, 8), ("x", "y"))


def ops(n, min_time):
    """Yields (op, thunk) for one size; a thunk returns ns per op."""
    from jax._src.sharding import common_devices_indices_map, _addressable_devices_indices_map
    from jax._src.sharding_impls import get_process_index_and_count
    devices = [FakeDevice(i) for i in range(n)]
    arr = np.array(devices, dtype=object).reshape(n // 8, 8)
    mesh = Mesh(arr, ("x", "y"))
    s = NamedSharding(mesh, P("x", "y"))
    shape = (n, 16)

    # JAX 0.12 interns meshes while they live (a weak-value interner, with no way to clear it):
    # a mesh made with other axis names than the live `mesh`, and dropped at once, is made anew
    # every time.
    def new_mesh():
        Mesh(np.array(devices, dtype=object).reshape(n // 8, 8), ("a", "b"))

    yield "NewMesh", lambda: per_op(new_mesh, min_time)
    yield "NewNamedSharding", lambda: per_op(lambda: NamedSharding(mesh, P("x", "y")), min_time)

    def mesh_equal():
        # Interned: an equal mesh is the same object, and == is identity (JAX 0.12).
        other = Mesh(np.array(devices, dtype=object).reshape(n // 8, 8), ("x", "y"))
        return per_op(lambda: mesh == other, min_time)

    yield "MeshEqual", mesh_equal
    yield "DevicesIndicesMap", lambda: per_op(lambda: common_devices_indices_map.__wrapped__(s, shape), min_time)

    def uncached(fn):
        # fn's own cache is skipped through __wrapped__; the devices_indices_map it reads is
        # cleared so that it is computed as well.
        def once():
            common_devices_indices_map.cache_clear()
            fn()
        return once

    yield "AddressableShards", lambda: per_op(uncached(lambda: _addressable_devices_indices_map.__wrapped__(s, shape)), min_time)
    # ProcessIndices: the sorted distinct process indices of the mesh's devices.
    yield "ProcessIndices", lambda: per_op(lambda: sorted({d.process_index for d in mesh.devices.flat}), min_time)
    yield "ProcessIndexAndCount", lambda: per_op(uncached(lambda: get_process_index_and_count.__wrapped__(s, 0, 2)), min_time)

    def visualize():
        s1 = NamedSharding(Mesh(np.array(devices, dtype=object), ("x",)), P("x"))
        sink = io.StringIO()

        def once():
            sink.seek(0)
            sink.truncate()
            with contextlib.redirect_stdout(sink):
                jax.debug.visualize_sharding((n,), s1, use_color=False)
        return per_op(once, min_time)

    if n <= 8192:  # JAX's rich table of 65,536 columns takes ~20 s a call: not run
        yield "Visualize", visualize

    def memory():
        # Bytes Python and numpy hold for a new mesh, a sharding and its devices_indices_map
        # (the devices excluded), as tracemalloc counts them; the time is that of making them.
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        m = Mesh(np.array(devices, dtype=object).reshape(n // 8, 8), ("a", "b"))
        sh = NamedSharding(m, P("a", "b"))
        idx = common_devices_indices_map.__wrapped__(sh, shape)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        del m, sh, idx

        def make():
            m = Mesh(np.array(devices, dtype=object).reshape(n // 8, 8), ("a", "b"))
            common_devices_indices_map.__wrapped__(NamedSharding(m, P("a", "b")), shape)
        return per_op(make, min_time), held

    yield "Memory", memory

    def lowering():
        if n > len(jax.devices()):
            raise RuntimeError(f"needs {n} devices, JAX has {len(jax.devices())}")
        real = Mesh(np.array(jax.devices()[:n]).reshape(n // 8, 8), ("x", "y"))
        rows = n // 8
        x = jax.ShapeDtypeStruct((rows, 8), np.float32, sharding=NamedSharding(real, P("x", "y")))
        ring = [(i, (i + 1) % rows) for i in range(rows)]

        def once():
            # A new function each time: jit caches lowerings per function object.
            def body(v):
                v = jax.lax.ppermute(v, "x", ring)
                for _ in range(10):
                    v = jax.lax.psum(v, "x")
                return v
            f = jax.jit(jax.shard_map(body, mesh=real, in_specs=P("x", "y"), out_specs=P(None, "y")))
            f.lower(x).as_text()
        return per_op(once, min_time)

    yield "CollectivesLowering", lowering


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--sizes", default="8,512,8192,65536")
    ap.add_argument("--only", default="", help="comma-separated operation names")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    out = {}
    for n in (int(v) for v in a.sizes.split(",")):
        for name, thunk in ops(n, a.min_time):
            if only and name not in only:
                continue
            key = f"Scale{name}/N={n}"
            try:
                r = thunk()
                out[key] = {"ns_per_op": r[0], "held_bytes": r[1]} if isinstance(r, tuple) else {"ns_per_op": r}
            except Exception as e:  # report, do not hide
                out[key] = {"error": f"{type(e).__name__}: {e}"[:300]}
    out["_jax_version"] = jax.__version__
    out["_devices"] = len(jax.devices())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
