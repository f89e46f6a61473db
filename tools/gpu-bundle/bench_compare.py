"""Puts the bundle's benchmark beside its JAX counterpart (run.sh, GPU mode): a Markdown table of
each figure's time per run of `xlamesh bench -format json` and of jax_bench.py, run in turns in
the same minute, and the ratio of their medians (xlamesh / JAX: below 1 is faster than JAX).

Usage: python3 bench_compare.py XLAMESH.json [...] -- JAX.txt [...]
"""

import json
import statistics
import sys


def xlamesh_figures(path):
    with open(path) as f:
        d = json.load(f)
    out = {}
    rows = [r for r in d["sweep"]["rows"] if r["strategy"] == "replicated"]
    if rows:
        out["matmul"] = min(rows, key=lambda r: r["seconds"])["seconds"]
    ones = [r for r in d["chain"]["rows"] if r["devices"] == 1]
    if ones:
        out["chain"] = ones[0]["chain_seconds"]
    for r in d["transfer"]["rows"]:
        if r["figure"] in ("Put", "ToHost"):
            out[r["figure"]] = r["seconds"]
    return out


def jax_figures(path):
    out, head = {}, ""
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                head = line[1:].strip()
            elif line.strip():
                name, secs = line.split()
                out[name] = float(secs)
    return out, head


def fmt(s):
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3f} {unit}"
    return f"{s / 1e-9:.0f} ns"


def main():
    args = sys.argv[1:]
    cut = args.index("--")
    xl = [xlamesh_figures(p) for p in args[:cut]]
    jx = [jax_figures(p) for p in args[cut + 1:]]
    head = jx[0][1] if jx else ""
    jx = [j for j, _ in jx]
    print(f"xlamesh and JAX ({head}) in turns, {len(xl)} and {len(jx)} runs; "
          "matmul is the median call, the others the mean (as `xlamesh bench`)")
    print()
    print("| figure | xlamesh runs | JAX runs | xlamesh / JAX (medians) |")
    print("|---|---|---|---|")
    for name in ("matmul", "chain", "Put", "ToHost"):
        xs = [x[name] for x in xl if name in x]
        js = [j[name] for j in jx if name in j]
        ratio = f"{statistics.median(xs) / statistics.median(js):.2f}" if xs and js else "-"
        print(f"| {name} | {', '.join(fmt(x) for x in xs)} | {', '.join(fmt(j) for j in js)} | {ratio} |")


if __name__ == "__main__":
    main()
