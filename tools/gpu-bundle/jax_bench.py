"""The JAX counterpart of the bundle's benchmark (run.sh, GPU mode): the same three figures as
`xlamesh bench -kernel matmul -what sweep,chain,transfer` on one device of the host, timed the same
way, so that the report can put them side by side.

  matmul:   f32[n,n] x f32[n,n] under jax.jit, replicated on device 0; the median of ITERS calls,
            each waited for, after one untimed warm-up (as the sweep's "replicated" row).
  chain:    CHAIN calls x = f(x) of x*1 on f32[8,2] on device 0 without waiting, then one wait;
            the mean of ITERS chains after a warm-up (as the chain figure's one-device row).
  Put:      jax.device_put of an f32[rows,8192] array of MIB MiB onto device 0, waited for.
  ToHost:   np.asarray of such an array (a fresh one each time: JAX keeps the host copy of an
            array it has read once); both the mean of ITERS after a warm-up.

Usage: python3 jax_bench.py N ITERS CHAIN MIB. Prints one line per figure: "figure seconds".
"""

import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np


def main():
    n, iters, chain, mib = (int(a) for a in sys.argv[1:5])
    dev = jax.devices()[0]
    print(f"# jax {jax.__version__}, {dev.platform} {dev.device_kind}, {jax.device_count()} devices")

    a = jax.device_put(np.arange(n * n, dtype=np.float32).reshape(n, n) % 7 / 7, dev)
    b = jax.device_put(np.arange(n * n, dtype=np.float32).reshape(n, n) % 5 / 5, dev)
    mm = jax.jit(jnp.matmul)
    mm(a, b).block_until_ready()
    times = []
    for _ in range(iters):
        t = time.perf_counter()
        mm(a, b).block_until_ready()
        times.append(time.perf_counter() - t)
    print(f"matmul {statistics.median(times):.9f}")

    f = jax.jit(lambda x: x * 1)
    x0 = jax.device_put(np.arange(16, dtype=np.float32).reshape(8, 2), dev)

    def run_chain():
        x = x0
        for _ in range(chain):
            x = f(x)
        x.block_until_ready()

    run_chain()
    t = time.perf_counter()
    for _ in range(iters):
        run_chain()
    print(f"chain {(time.perf_counter() - t) / iters:.9f}")

    rows = (mib << 20) // (8192 * 4)
    host = (np.arange(rows * 8192, dtype=np.float32) % 1000).reshape(rows, 8192)
    jax.device_put(host, dev).block_until_ready()
    t = time.perf_counter()
    for _ in range(iters):
        jax.device_put(host, dev).block_until_ready()
    print(f"Put {(time.perf_counter() - t) / iters:.9f}")

    arrays = [jax.device_put(host, dev) for _ in range(iters + 1)]
    for arr in arrays:
        arr.block_until_ready()
    np.asarray(arrays[0])
    t = time.perf_counter()
    for arr in arrays[1:]:
        np.asarray(arr)
    print(f"ToHost {(time.perf_counter() - t) / iters:.9f}")


if __name__ == "__main__":
    main()
