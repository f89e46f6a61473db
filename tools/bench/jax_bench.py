"""JAX counterparts of xlamesh's Go benchmarks: one round of tools/bench.sh's interleaved runs.

Each measurement mirrors the Go benchmark of the same name (jit/bench_test.go, jit/bench_async_test.go, examples/mlp/bench_test.go, examples/gpt/bench_test.go,
mesh/bench_test.go, lower/bench_test.go). Every measurement is warmed up first (compilation, caches,
first-touch of memory), as the Go benchmarks are. Timed measurements run for at least --min-time
seconds, like `go test -benchtime=Ds`; the 256 MiB transfers and the memory-copy anchor run exactly
--iters times, the same N that tools/bench.sh gives Go as `-benchtime=Nx`.

Prints one line of JSON: {name: {"ns_per_op": ..., ...}, "_jax_version": ..., ...}.
Runs on JAX's CPU backend with 8 devices (JAX_PLATFORMS=cpu,
XLA_FLAGS=--xla_force_host_platform_device_count=8, set by tools/bench.sh), that is on the XLA
that jaxlib ships, not on xlamesh's PJRT plugin.

usage: jax_bench.py [--min-time SECONDS] [--iters N] [--only NAME,...]
"""
import argparse
import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import jaxlib
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

BIG = 8192  # 8192 x 8192 float32 = 256 MiB, as in jit/bench_test.go
K = 2048  # the matmul's size, as in jit/bench_async_test.go
CHAIN = 1000  # calls per chained op


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


def per_n(fn, n, setup=None, teardown=None):
    """Warms up with one call, then times exactly n calls of fn; ns per call.

    setup() runs before each call and its result is fn's argument; teardown(result of setup) runs
    after; neither is timed.
    """
    def once():
        arg = setup() if setup else None
        t = time.perf_counter()
        fn(arg) if setup else fn()
        t = time.perf_counter() - t
        if teardown:
            teardown(arg)
        return t

    once()
    return sum(once() for _ in range(n)) / n * 1e9


def throughput(ns, nbytes):
    return {"ns_per_op": ns, "mb_per_s": nbytes / (ns / 1e9) / 1e6}


def mesh_1d(n):
    return Mesh(np.array(jax.devices()[:n]), ("x",))


def bench_calls(out, min_time):
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))
    s_xy = NamedSharding(mesh, P("x", "y"))
    host = np.arange(16, dtype=np.float32).reshape(8, 2)

    # Call: x*2 on an 8x2 f32 array sharded P('x', 'y') over a 4x2 mesh, call + wait.
    x = jax.device_put(host, s_xy)
    double = jax.jit(lambda a: a * 2, in_shardings=s_xy, out_shardings=s_xy)
    out["Call"] = {"ns_per_op": per_op(lambda: double(x).block_until_ready(), min_time)}

    # LoweringCacheHit: lowering a function already lowered for the same avals and shardings.
    out["LoweringCacheHit"] = {"ns_per_op": per_op(lambda: double.lower(x), min_time)}

    # Call1Device: x*2 on one device, call + wait.
    x1 = jax.device_put(host, jax.devices()[0])
    double1 = jax.jit(lambda a: a * 2)
    out["Call1Device"] = {"ns_per_op": per_op(lambda: double1(x1).block_until_ready(), min_time)}

    # Chained1000x*: 1,000 calls x = f(x) of x*1 without waiting, then one wait.
    def chained(f, x0):
        def run():
            y = x0
            for _ in range(CHAIN):
                y = f(y)
            y.block_until_ready()
        return run

    one1 = jax.jit(lambda a: a * 1)
    out["Chained1000x1Device"] = {"ns_per_op": per_op(chained(one1, x1), min_time)}
    s8 = NamedSharding(mesh_1d(8), P("x"))
    one8 = jax.jit(lambda a: a * 1, out_shardings=s8)
    out["Chained1000x8Devices"] = {"ns_per_op": per_op(chained(one8, jax.device_put(host, s8)), min_time)}


def bench_call_args(out, min_time):
    # CallArgs1 .. CallArgs256: call + wait of the sum of n 8x2 f32 arrays, each P('x') on a 1-D
    # mesh of 8 devices (jit/bench_speed_test.go's benchCallArgs): the cost of a call per argument.
    s8 = NamedSharding(mesh_1d(8), P("x"))
    host = np.arange(16, dtype=np.float32).reshape(8, 2)
    for n in (1, 8, 64, 256):
        xs = [jax.device_put(host, s8) for _ in range(n)]

        def total(*a):
            y = a[0]
            for x in a[1:]:
                y = y + x
            return y

        f = jax.jit(total, out_shardings=s8)
        out[f"CallArgs{n}"] = {"ns_per_op": per_op(lambda: f(*xs).block_until_ready(), min_time)}
        for x in xs:
            x.delete()


def bench_matmul(out, min_time):
    # Matmul2048xN: A 2048x2048 f32 split by rows (P('x', None)) over a 1-D mesh of n devices,
    # B replicated, the result P('x', None); call + wait.
    host = ((np.arange(K * K) % 7) * 0.25).astype(np.float32).reshape(K, K)
    for n in (1, 2, 8):
        m = mesh_1d(n)
        rows = NamedSharding(m, P("x", None))
        a = jax.device_put(host, rows)
        b = jax.device_put(host, NamedSharding(m, P()))
        mm = jax.jit(lambda u, v: u @ v, out_shardings=rows)
        ns = per_op(lambda: mm(a, b).block_until_ready(), min_time)
        out[f"Matmul2048x{n}"] = {"ns_per_op": ns, "gflop_per_s": 2 * K**3 / ns}
        a.delete()
        b.delete()


def bench_transfers(out, iters):
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))
    s_xy = NamedSharding(mesh, P("x", "y"))
    big = (np.arange(BIG * BIG, dtype=np.int64) % 1000).astype(np.float32).reshape(BIG, BIG)
    nbytes = big.nbytes

    # Memcpy256MiB: numpy's copy of 256 MiB into an existing array (the Go side: copy(dst, src)).
    src = np.resize(np.arange(256, dtype=np.uint8), nbytes)  # byte i is i % 256, as in Go
    dst = np.empty_like(src)
    out["Memcpy256MiB"] = throughput(per_n(lambda: np.copyto(dst, src), iters), nbytes)
    del src, dst

    # Put256MiB: 8192x8192 f32 sharded P('x', 'y') onto 8 devices, waited for, freed.
    def put():
        a = jax.device_put(big, s_xy)
        a.block_until_ready()
        a.delete()
    out["Put256MiB"] = throughput(per_n(put, iters), nbytes)

    # ToHost256MiB: np.asarray of a fresh array each time (a jax.Array keeps its host copy after
    # the first np.asarray, so reusing one array would time a cache hit). Making the array is not
    # timed.
    def fresh():
        a = jax.device_put(big, s_xy)
        a.block_until_ready()
        return a

    out["ToHost256MiB"] = throughput(per_n(lambda a: np.asarray(a), iters, fresh, lambda a: a.delete()), nbytes)

    # ToHostFlat256MiB: Go's Array.ToHost (a new []float32) beside ToHostBytes; on the JAX side the
    # same np.asarray of a fresh array.
    out["ToHostFlat256MiB"] = throughput(per_n(lambda a: np.asarray(a), iters, fresh, lambda a: a.delete()), nbytes)

    # MemcpyFresh256MiB: the anchor for copies into fresh memory, numpy's copy of 256 MiB into a new
    # array each time (the Go side: make + copy).
    src = np.resize(np.arange(256, dtype=np.uint8), nbytes)
    out["MemcpyFresh256MiB"] = throughput(per_n(lambda: np.array(src, copy=True), iters), nbytes)
    del src


class FakeDevice:
    platform = "cpu"
    device_kind = "cpu"
    process_index = 0

    def __init__(self, i):
        self.id = i

    def __repr__(self):
        return f"FakeDevice({self.id})"


def bench_indices(out, min_time):
    # DevicesIndicesMap: a 16x16x8 mesh of 2048 (fake) devices, rank-4 shape.
    fake = np.array([FakeDevice(i) for i in range(2048)], dtype=object).reshape(16, 16, 8)
    big_sharding = NamedSharding(Mesh(fake, ("x", "y", "z")), P("x", None, ("z", "y")))
    shape = (64, 3, 256, 7)
    # devices_indices_map is an LRU-cache lookup after the first call; the function behind the
    # cache (__wrapped__) is the computation xlamesh's DevicesIndicesMap does every time.
    from jax._src.sharding import common_devices_indices_map
    try:
        out["DevicesIndicesMap"] = {
            "ns_per_op": per_op(lambda: common_devices_indices_map.__wrapped__(big_sharding, shape), min_time),
            "cached_ns_per_op": per_op(lambda: big_sharding.devices_indices_map(shape), min_time),
        }
    except Exception as e:  # report, do not hide
        out["DevicesIndicesMap"] = {"error": f"{type(e).__name__}: {e}"}


def bench_lower(out, min_time):
    # Lower5000: trace and lower a ~5,000-op elementwise program on a sharded 1024x512 array.
    # jit caches traces and lowerings per Python function object, so every iteration makes a new
    # function (make_large) to trace it afresh, as Go builds its module afresh; the same function
    # lowered again (a cache hit) is reported beside it.
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(4, 2), ("x", "y"))
    s_xy = NamedSharding(mesh, P("x", "y"))
    s_x = NamedSharding(mesh, P("x"))

    def make_large():
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
        return large

    aval = jax.ShapeDtypeStruct((1024, 512), jnp.float32, sharding=s_xy)
    cached = jax.jit(make_large(), out_shardings=s_x)
    out["Lower5000"] = {
        "ns_per_op": per_op(lambda: jax.jit(make_large(), out_shardings=s_x).lower(aval).as_text(), min_time),
        "cached_ns_per_op": per_op(lambda: cached.lower(aval).as_text(), min_time),
    }


def bench_train(out, min_time):
    # TrainStep: one SGD step (lr 0.01) of examples/mlp's 2-layer MLP at mlp.Bench's size on a 2x4
    # ("data", "model") mesh, the same shardings and donation as examples/mlp's BenchmarkTrainStep,
    # call + wait for every result. Inputs follow examples/mlp.Init's formula.
    b, i, h, o = 256, 512, 1024, 256
    shapes = [(i, h), (h,), (h, o), (o,), (b, i), (b, o)]
    specs = [P(None, "model"), P("model"), P("model", None), P(), P("data", None), P("data", None)]
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(2, 4), ("data", "model"))
    sh = [NamedSharding(mesh, s) for s in specs]

    def init(k, shape):
        n = int(np.prod(shape))
        v = ((np.arange(n, dtype=np.int64) * (7 + 2 * k) + 3 * k) % 17 - 8).astype(np.float64)
        return (v / (64.0 if k < 4 else 8.0)).astype(np.float32).reshape(shape)

    def loss_fn(w1, b1, w2, b2, x, y):
        d = jnp.tanh(x @ w1 + b1) @ w2 + b2 - y
        return jnp.sum(d * d) / np.float32(d.size)

    def step(w1, b1, w2, b2, x, y):
        loss, g = jax.value_and_grad(loss_fn, argnums=(0, 1, 2, 3))(w1, b1, w2, b2, x, y)
        return (loss, *[w - gi * np.float32(0.01) for w, gi in zip((w1, b1, w2, b2), g)])

    f = jax.jit(step, in_shardings=tuple(sh), out_shardings=(NamedSharding(mesh, P()), *sh[:4]),
                donate_argnums=(0, 1, 2, 3))
    args = [jax.device_put(init(k, s), sh_) for k, (s, sh_) in enumerate(zip(shapes, sh))]

    def once():
        nonlocal args
        res = f(*args)
        jax.block_until_ready(res)
        args = list(res[1:]) + args[4:]

    out["TrainStep"] = {"ns_per_op": per_op(once, min_time)}


def bench_gpt(out, min_time):
    # GPTStep: one train step of examples/gpt (tools/oracle/gpt.py, its JAX twin) at Tiny's size on
    # the 2x4 ("data", "model") mesh, as the example's loop runs it: device_put of the batch, the
    # jitted step (parameters and optimizer state donated), float() of the loss.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oracle"))
    import gpt  # noqa: E402  (tools/oracle/gpt.py)
    step, params, state, toks, _, d_sh = gpt.setup()
    i = 0

    def once():
        nonlocal params, state, i
        x, y = gpt.batch(toks, i % gpt.STEPS)
        params, state, loss = step(params, state, jax.device_put(x, d_sh), jax.device_put(y, d_sh))
        float(loss)
        i += 1

    out["GPTStep"] = {"ns_per_op": per_op(once, min_time)}


SECTIONS = {
    "calls": bench_calls,
    "callargs": bench_call_args,
    "train": bench_train,
    "gpt": bench_gpt,
    "matmul": bench_matmul,
    "transfers": bench_transfers,
    "indices": bench_indices,
    "lower": bench_lower,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--min-time", type=float, default=1.0, help="seconds per timed measurement (Go: -benchtime)")
    ap.add_argument("--iters", type=int, default=10, help="iterations of the 256 MiB measurements (Go: -benchtime=Nx)")
    ap.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections: " + ", ".join(SECTIONS))
    args = ap.parse_args()
    if len(jax.devices()) < 8:
        sys.exit(f"jax_bench.py: needs 8 devices, JAX has {len(jax.devices())} "
                 "(set XLA_FLAGS=--xla_force_host_platform_device_count=8, as tools/bench.sh does)")
    out = {}
    for name in args.only.split(","):
        section = SECTIONS[name]
        if name == "transfers":
            section(out, args.iters)
        else:
            section(out, args.min_time)
    out["_jax_version"] = jax.__version__
    out["_jaxlib_version"] = jaxlib.__version__
    out["_devices"] = len(jax.devices())
    json.dump(out, sys.stdout, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
