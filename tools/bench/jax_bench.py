"""JAX counterparts of xlamesh's Go benchmarks, run in the same session (see tools/bench.sh).

Each measurement mirrors one Go benchmark; the output is JSON {name: {"ns_per_op": ..., "mb_per_s": ...}}.
Runs on JAX's CPU backend with 8 devices (JAX_PLATFORMS=cpu,
XLA_FLAGS=--xla_force_host_platform_device_count=8, set by tools/bench.sh).
"""
import json
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def per_op(fn, min_time=1.0, min_iters=3):
    """Runs fn repeatedly for about min_time seconds; returns ns per call."""
    fn()  # warm-up (compile, caches)
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time and n >= min_iters:
            return elapsed / n * 1e9


def main():
    out = {}
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))
    s_xy = NamedSharding(mesh, P("x", "y"))

    # BenchmarkCall: x*2 on an 8x2 f32 array sharded P('x', 'y').
    x = jax.device_put(np.arange(16, dtype=np.float32).reshape(8, 2), s_xy)
    double = jax.jit(lambda a: a * 2, in_shardings=s_xy, out_shardings=s_xy)
    out["Call"] = {"ns_per_op": per_op(lambda: double(x).block_until_ready(), 2.0)}

    # BenchmarkLoweringCacheHit: lowering a function already lowered for the same avals and shardings.
    out["LoweringCacheHit"] = {"ns_per_op": per_op(lambda: double.lower(x))}

    # BenchmarkPut256MiB / BenchmarkToHost256MiB: 8192 x 8192 f32 sharded P('x', 'y').
    big = (np.arange(8192 * 8192, dtype=np.int64) % 1000).astype(np.float32).reshape(8192, 8192)
    nbytes = big.nbytes

    def put():
        a = jax.device_put(big, s_xy)
        a.block_until_ready()
        a.delete()
    ns = per_op(put, 3.0)
    out["Put256MiB"] = {"ns_per_op": ns, "mb_per_s": nbytes / (ns / 1e9) / 1e6}

    arr = jax.device_put(big, s_xy)
    arr.block_until_ready()

    def to_host():
        # jax.Array caches its host copy after the first np.asarray, so this does what
        # ArrayImpl._value does on a miss: copy each distinct shard (replica 0) into place.
        host = np.empty(arr.shape, arr.dtype)
        for s in arr.addressable_shards:
            if s.replica_id == 0:
                host[s.index] = np.asarray(s.data)
    ns = per_op(to_host, 3.0)
    out["ToHost256MiB"] = {"ns_per_op": ns, "mb_per_s": nbytes / (ns / 1e9) / 1e6}
    arr.delete()

    # BenchmarkDevicesIndicesMap: a 16x16x8 mesh of 2048 (fake) devices, rank-4 shape.
    class FakeDevice:
        platform = "cpu"
        device_kind = "cpu"
        process_index = 0

        def __init__(self, i):
            self.id = i

        def __repr__(self):
            return f"FakeDevice({self.id})"

    fake = np.array([FakeDevice(i) for i in range(2048)], dtype=object).reshape(16, 16, 8)
    big_mesh = Mesh(fake, ("x", "y", "z"))
    shape = (64, 3, 256, 7)

    big_sharding = NamedSharding(big_mesh, P("x", None, ("z", "y")))
    # devices_indices_map is an LRU-cache lookup after the first call; the function behind
    # the cache (__wrapped__) is the computation xlamesh's DevicesIndicesMap does every time.
    from jax._src.sharding import common_devices_indices_map
    try:
        out["DevicesIndicesMap"] = {
            "ns_per_op": per_op(lambda: common_devices_indices_map.__wrapped__(big_sharding, shape)),
            "cached_ns_per_op": per_op(lambda: big_sharding.devices_indices_map(shape)),
        }
    except Exception as e:  # report, do not hide
        out["DevicesIndicesMap"] = {"error": f"{type(e).__name__}: {e}"}

    # BenchmarkLower5000: trace and lower a ~5,000-op elementwise program on a sharded 1024x512 array.
    s_x = NamedSharding(mesh, P("x"))

    def large(a):
        y = a
        i = 0
        while i < 5000:
            k = i % 5
            if k == 0:
                y = y + a
            elif k == 1:
                y = y * 0.5
                i += 1
            elif k == 2:
                y = jnp.tanh(y)
            elif k == 3:
                y = jnp.maximum(y, a)
            elif i % 100 == 4:
                y = jax.lax.with_sharding_constraint(y, s_x)
            else:
                y = y - a
            i += 1
        return y.sum(axis=1)
    aval = jax.ShapeDtypeStruct((1024, 512), jnp.float32, sharding=s_xy)
    out["Lower5000"] = {"ns_per_op": per_op(lambda: jax.jit(large, out_shardings=s_x).lower(aval).as_text(), 5.0)}

    out["_jax_version"] = jax.__version__
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
