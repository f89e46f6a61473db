"""JAX's side of checkpoint's benchmarks (checkpoint/bench_test.go): one round of
tools/bench/checkpoint.sh's interleaved runs.

Saves the same array as BenchmarkSave1GiB (float32, element i is benchValue(i): i times
2654435761 modulo 2**32, scaled to [-1, 1); MIB MiB as
[MIB*64, 4096], on 8 CPU devices split 8 ways by rows) with
jax.experimental.array_serialization (GlobalAsyncCheckpointManager.serialize, then
wait_until_finished: zarr v2, zstd, tensorstore's file driver) ITERS times, each to a fresh
directory removed untimed afterwards, after one untimed warm-up save; then restores one such
checkpoint onto the same sharding ITERS times (deserialize, then block_until_ready), after one
warm-up restore. Prints one line of JSON: {"Save1GiB": {"ns_per_op": ...}, "Restore1GiB":
{...}, "_jax_version": ..., "_tensorstore_version": ...}, ns_per_op the median.

With --check PATH it times nothing: it restores the checkpoint xlamesh saved at PATH
(BenchmarkSave1GiB with XLAMESH_CKPT_BENCH_KEEP=PATH) through tensorstore and exits non-zero
unless every shard holds exactly the values above: JAX reads xlamesh's large, streamed chunks.

usage: checkpoint_jax.py DIR [--mib 1024] [--iters 3] [--check PATH]
"""
import argparse
import importlib.metadata
import json
import os
import shutil
import statistics
import time

import jax
import numpy as np
from jax.experimental.array_serialization import serialization
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--check")
    args = ap.parse_args()
    rows, cols = args.mib * 64, 4096
    mesh = jax.make_mesh((8,), ("x",))
    s = NamedSharding(mesh, P("x"))
    i = np.arange(rows * cols, dtype=np.uint64)
    host = ((i * np.uint64(2654435761) % np.uint64(1 << 32)).astype(np.float64) / (1 << 31) - 1).astype(np.float32)
    host = host.reshape(rows, cols)
    del i
    a = jax.device_put(host, s)
    a.block_until_ready()
    del host

    if args.check:
        m = serialization.GlobalAsyncCheckpointManager()
        [b] = m.deserialize([s], [serialization.get_tensorstore_spec(args.check)])
        for got, want in zip(b.addressable_shards, a.addressable_shards):
            if got.index != want.index or not np.array_equal(np.asarray(got.data), np.asarray(want.data)):
                raise SystemExit("checkpoint_jax: %s restores other values at %s" % (args.check, got.index))
        print("checkpoint_jax: JAX restores %s exactly (%d shards)" % (args.check, len(b.addressable_shards)))
        return

    def save(path):
        m = serialization.GlobalAsyncCheckpointManager()
        m.serialize([a], [serialization.get_tensorstore_spec(path)], on_commit_callback=lambda: None)
        m.wait_until_finished()

    def restore(path):
        m = serialization.GlobalAsyncCheckpointManager()
        [b] = m.deserialize([s], [serialization.get_tensorstore_spec(path)])
        b.block_until_ready()
        return b

    for i in range(args.iters + 1):
        shutil.rmtree(os.path.join(args.dir, "jax_save_%d" % i), ignore_errors=True)
    shutil.rmtree(os.path.join(args.dir, "jax_restore"), ignore_errors=True)
    times = {"Save1GiB": [], "Restore1GiB": []}
    for i in range(args.iters + 1):
        path = os.path.join(args.dir, "jax_save_%d" % i)
        start = time.perf_counter()
        save(path)
        if i > 0:
            times["Save1GiB"].append(time.perf_counter() - start)
        shutil.rmtree(path)
    path = os.path.join(args.dir, "jax_restore")
    save(path)
    for i in range(args.iters + 1):
        start = time.perf_counter()
        b = restore(path)
        if i > 0:
            times["Restore1GiB"].append(time.perf_counter() - start)
        if i == 0 and not np.array_equal(np.asarray(b.addressable_shards[0].data),
                                         np.asarray(a.addressable_shards[0].data)):
            raise SystemExit("checkpoint_jax: the restored array differs")
        del b
    shutil.rmtree(path)
    out = {k: {"ns_per_op": statistics.median(v) * 1e9, "runs_ns": [t * 1e9 for t in v]} for k, v in times.items()}
    out["_jax_version"] = jax.__version__
    out["_tensorstore_version"] = importlib.metadata.version("tensorstore")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
