"""Regenerates gspmd_xla.json: XLA's own conversion of sdy shardings to HloSharding.

Builds StableHLO modules whose @main arguments carry random #sdy.sharding
attributes (meshes with and without device_ids, size-1 axes, sub-axes, open
dimensions, replicated axes, maximal and empty meshes), converts each with
jaxlib's mlir_module_to_xla_computation (XLA's sdy export) and records the
`sharding={...}` of every parameter. TensorSharding.GSPMD must reproduce it.

    .cache/oracle-venv/bin/python shardy/testdata/gen_gspmd_xla.py
"""
import json
import os
import random
import re

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
from jax._src.lib import _jax

MESHES = [
    '<["x"=4, "y"=2]>',
    '<["x"=2, "y"=4]>',
    '<["x"=8]>',
    '<["x"=2, "y"=2, "z"=2]>',
    '<["a"=1, "b"=8]>',
    '<["a"=8, "b"=1]>',
    '<["x"=4, "y"=2], device_ids=[0, 1, 3, 2, 6, 7, 5, 4]>',
    '<["x"=2, "y"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>',
    '<["x"=2, "y"=2, "z"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>',
    '<["x"=8], device_ids=[1, 0, 3, 2, 5, 4, 7, 6]>',
]


def axes_of(mesh):
    return [(n, int(s)) for n, s in re.findall(r'"(\w+)"=(\d+)', mesh.split("device_ids")[0])]


def sub_axes(name, size):
    """All valid sub-axes "name":(m)k of an axis of the given size."""
    out = []
    for m in range(1, size + 1):
        for k in range(2, size + 1):
            if size % (m * k) == 0 and k != size:
                out.append((name, m, k))
    return out


def ref_text(r):
    return f'"{r[0]}"' if len(r) == 1 else f'"{r[0]}":({r[1]}){r[2]}'


def overlaps(a, b):
    if a[0] != b[0]:
        return False
    if len(a) == 1 or len(b) == 1:
        return True
    return a[1] < b[1] * b[2] and b[1] < a[1] * a[2]


def random_sharding(rng, mesh, rank):
    axes = axes_of(mesh)
    pool = [(n,) for n, _ in axes]
    for n, s in axes:
        pool += sub_axes(n, s)
    rng.shuffle(pool)
    chosen = []
    for r in pool:
        if len(chosen) >= rng.randint(0, len(axes) + 1):
            break
        if not any(overlaps(r, c) for c in chosen):
            chosen.append(r)
    dims = [[] for _ in range(rank)]
    rep = []
    for r in chosen:
        if rank and rng.random() < 0.8:
            dims[rng.randrange(rank)].append(r)
        else:
            rep.append(r)
    # No two consecutive sub-axes of one axis that could merge.
    for d in dims:
        for i in range(1, len(d)):
            a, b = d[i - 1], d[i]
            if len(a) == 3 and len(b) == 3 and a[0] == b[0] and a[1] * a[2] == b[1]:
                return None
    order = {n: i for i, (n, _) in enumerate(axes)}
    rep.sort(key=lambda r: (order[r[0]], r[1] if len(r) == 3 else 0))
    for i in range(1, len(rep)):
        a, b = rep[i - 1], rep[i]
        if len(a) == 3 and len(b) == 3 and a[0] == b[0] and a[1] * a[2] == b[1]:
            return None
    texts = []
    for d in dims:
        body = ", ".join(ref_text(r) for r in d)
        if rng.random() < 0.25:
            body = body + ", ?" if body else "?"
        texts.append("{" + body + "}")
    s = "<@mesh, [" + ", ".join(texts) + "]"
    if rep:
        s += ", replicated={" + ", ".join(ref_text(r) for r in rep) + "}"
    return s + ">"


def convert(mesh, shardings, rank):
    args = ", ".join(
        f"%arg{i}: tensor<{'x'.join(['8'] * rank) + 'x' if rank else ''}f32> {{sdy.sharding = #sdy.sharding{s}}}"
        for i, s in enumerate(shardings))
    mod = (f"module @m attributes {{mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32}} {{\n"
           f"  sdy.mesh @mesh = {mesh}\n"
           f"  func.func public @main({args}) {{\n    return\n  }}\n}}\n")
    hlo = _jax.mlir.mlir_module_to_xla_computation(mod, use_tuple_args=False, return_tuple=False).as_hlo_text()
    got = {}
    for line in hlo.splitlines():
        m = re.search(r"parameter\((\d+)\), sharding=(\{.*?\})(, frontend_attributes|$)", line)
        if m:
            got[int(m.group(1))] = m.group(2)
    return [got[i] for i in range(len(shardings))]


def main():
    rng = random.Random(3)
    cases, seen = [], set()
    for mesh in MESHES:
        for rank in range(0, 4):
            shardings = []
            for _ in range(300):
                s = random_sharding(rng, mesh, rank)
                if s and (mesh, s) not in seen:
                    seen.add((mesh, s))
                    shardings.append(s)
                if len(shardings) == 30:
                    break
            for s, want in zip(shardings, convert(mesh, shardings, rank)):
                cases.append({"mesh": mesh, "sharding": s, "want": want})
    for mesh, s in [("<[], device_ids=[3]>", "<@mesh, []>"), ("<[]>", "<@mesh, []>")]:
        cases.append({"mesh": mesh, "sharding": s, "want": convert(mesh, [s], 0)[0]})
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gspmd_xla.json")
    with open(out, "w") as f:
        f.write('{"jax": "%s", "cases": [\n' % jax.__version__)
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        f.write("\n]}\n")
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()
