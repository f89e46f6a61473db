"""The JAX side of tools/bench/linalg.sh: jnp.linalg.cholesky and jnp.linalg.svd (reduced) of
1024x1024 float32 matrices on one CPU device, over jaxlib's LAPACK kernels.

    linalg_jax.py --export DIR   writes DIR/<name>.exported (jax.export's serialization, for
                                 xlamesh's BenchmarkLinalgJAXProgram) and DIR/<name>.f32 (the
                                 input, row-major float32), for Cholesky1024 and SVD1024
    linalg_jax.py DIR [--min-time S]
                                 times JAX's own call + block_until_ready of each on the same
                                 input (one warm-up call, then calls until S seconds have passed)
                                 and prints one JSON line: {name: {"ns_per_op", "iters"}, ...}
"""

import argparse
import json
import os
import time

import numpy as np

import jax
import jax.numpy as jnp
from jax import export

N = 1024


def inputs():
    rng = np.random.default_rng(0)
    b = rng.standard_normal((N, N)).astype(np.float32)
    spd = (b @ b.T / N + np.eye(N, dtype=np.float32)).astype(np.float32)
    return {
        "Cholesky1024": (jnp.linalg.cholesky, spd),
        "SVD1024": (lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)), b),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dir")
    p.add_argument("--export", action="store_true")
    p.add_argument("--min-time", type=float, default=1.0)
    args = p.parse_args()
    progs = inputs()
    if args.export:
        os.makedirs(args.dir, exist_ok=True)
        for name, (fn, x) in progs.items():
            exp = export.export(jax.jit(fn), platforms=("cpu",))(x)
            with open(os.path.join(args.dir, name + ".exported"), "wb") as f:
                f.write(exp.serialize())
            with open(os.path.join(args.dir, name + ".f32"), "wb") as f:
                f.write(np.ascontiguousarray(x).tobytes())
        return
    out = {"_jax_version": jax.__version__}
    for name, (fn, x) in progs.items():
        f = jax.jit(fn)
        dev = jax.device_put(x)
        jax.block_until_ready(f(dev))
        iters, start = 0, time.perf_counter()
        while True:
            jax.block_until_ready(f(dev))
            iters += 1
            elapsed = time.perf_counter() - start
            if elapsed >= args.min_time:
                break
        out[name] = {"ns_per_op": elapsed / iters * 1e9, "iters": iters}
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
