"""Regenerates validate_shardy.json: Shardy's verifier verdict on random shardings.

Each case is one #sdy.sharding on a rank-2 @main argument, drawn from valid
and invalid pieces (unknown axes, duplicates, unsorted replicated/unreduced
lists, priorities on empty closed dims, bad sub-axes, wrong rank). jaxlib
parses and verifies the module; "want" is "" when it is accepted, else
Shardy's message. Validate must agree.

    .cache/oracle-venv/bin/python shardy/testdata/gen_validate_shardy.py
"""
import json
import os
import random
import re

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
from jax._src.lib import _jax

MESH = '<["a"=2, "b"=4, "c"=6]>'
REFS = ['"a"', '"b"', '"c"', '"z"', '"b":(1)2', '"b":(2)2', '"b":(1)4', '"b":(0)2', '"b":(1)1', '"c":(1)2',
        '"c":(2)3', '"c":(1)3', '"c":(3)2', '"c":(2)2', '"a":(1)2']


def verify(sharding):
    mod = (f"module @m attributes {{mhlo.num_partitions = 8 : i32}} {{\n  sdy.mesh @mesh = {MESH}\n"
           f"  func.func public @main(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding{sharding}}}) {{\n"
           f"    return\n  }}\n}}\n")
    try:
        _jax.mlir.mlir_module_to_xla_computation(mod, use_tuple_args=False, return_tuple=False)
        return ""
    except Exception as e:
        m = re.search(r"error: (?:'func.func' op arg 0 - )?(.*?)(?: \||\n|$)", str(e))
        return m.group(1) if m else str(e)


def random_sharding(rng):
    rank = 2 if rng.random() < 0.9 else rng.choice([1, 3])
    dims = []
    for _ in range(rank):
        refs = rng.sample(REFS, rng.choice([0, 0, 1, 1, 2]))
        body = ", ".join(refs)
        if rng.random() < 0.2:
            body = body + ", ?" if body else "?"
        d = "{" + body + "}"
        if rng.random() < 0.15:
            d += f"p{rng.randint(0, 3)}"
        dims.append(d)
    s = "<@mesh, [" + ", ".join(dims) + "]"
    for key in ("replicated", "unreduced"):
        if rng.random() < 0.3:
            s += f", {key}={{" + ", ".join(rng.sample(REFS, rng.randint(1, 2))) + "}"
    return s + ">"


def main():
    rng = random.Random(4)
    seen, cases = set(), []
    while len(cases) < 600:
        s = random_sharding(rng)
        if s in seen:
            continue
        seen.add(s)
        cases.append({"sharding": s, "want": verify(s)})
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "validate_shardy.json")
    with open(out, "w") as f:
        f.write('{"jax": "%s", "mesh": %s, "cases": [\n' % (jax.__version__, json.dumps(MESH)))
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        f.write("\n]}\n")
    print(f"wrote {len(cases)} cases ({sum(1 for c in cases if not c['want'])} valid) to {out}")


if __name__ == "__main__":
    main()
