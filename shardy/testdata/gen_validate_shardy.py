"""Regenerates validate_shardy.json: Shardy's verifier verdict on random shardings.

Each case is one #sdy.sharding on a rank-2 @main argument, drawn from valid
and invalid pieces (unknown axes, duplicates, unsorted replicated/unreduced
lists, priorities on empty closed dims, bad sub-axes, wrong rank). jaxlib
parses and verifies the module; "want" is "" when it is accepted, else
Shardy's message. Validate must agree. For a per-axis message (sub-axis
rules, checked axis by axis in hash-table order), "axis_alone" has Shardy's
verdict on the sharding cut down to each axis it uses: the messages it
could have given instead.

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
    """A random sharding as its parts: dims [(refs, open, priority)], replicated, unreduced."""
    rank = 2 if rng.random() < 0.9 else rng.choice([1, 3])
    dims = []
    for _ in range(rank):
        refs = rng.sample(REFS, rng.choice([0, 0, 1, 1, 2]))
        is_open = rng.random() < 0.2
        priority = rng.randint(0, 3) if rng.random() < 0.15 else None
        dims.append((refs, is_open, priority))
    lists = {}
    for key in ("replicated", "unreduced"):
        if rng.random() < 0.3:
            lists[key] = rng.sample(REFS, rng.randint(1, 2))
    return dims, lists


def text(parts, keep=None):
    """The sharding's text; with keep, only the axis refs it accepts and no
    priorities (a cut dim may be left empty and closed)."""
    dims, lists = parts
    out = []
    for refs, is_open, priority in dims:
        body = ", ".join(r for r in refs if keep is None or keep(r))
        if is_open:
            body = body + ", ?" if body else "?"
        out.append("{" + body + "}" + (f"p{priority}" if priority is not None and keep is None else ""))
    s = "<@mesh, [" + ", ".join(out) + "]"
    for key, refs in lists.items():
        kept = [r for r in refs if keep is None or keep(r)]
        if kept:
            s += f", {key}={{" + ", ".join(kept) + "}"
    return s + ">"


# Messages of Shardy's last, per-axis check. It visits axes in hash-table
# order, so with problems on two axes it may name either.
PER_AXIS = re.compile(r"^(both sub-axis and full-axis|sub-axis|overlapping sub-axes)")


def axis_alone(parts):
    """Shardy's verdict on the sharding cut down to each mesh axis it uses, for
    the per-axis messages it could have given instead of the one it gave."""
    verdicts = []
    for axis in ("a", "b", "c"):
        name = '"%s"' % axis
        if any(r.split(":")[0] == name for refs, _, _ in parts[0] for r in refs) or \
                any(r.split(":")[0] == name for refs in parts[1].values() for r in refs):
            v = verify(text(parts, lambda r: r.split(":")[0] == name))
            if v and v not in verdicts:
                verdicts.append(v)
    return verdicts


def main():
    rng = random.Random(4)
    seen, cases = set(), []
    while len(cases) < 600:
        parts = random_sharding(rng)
        s = text(parts)
        if s in seen:
            continue
        seen.add(s)
        case = {"sharding": s, "want": verify(s)}
        if PER_AXIS.match(case["want"]):
            case["axis_alone"] = axis_alone(parts)
        cases.append(case)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "validate_shardy.json")
    with open(out, "w") as f:
        f.write('{"jax": "%s", "mesh": %s, "cases": [\n' % (jax.__version__, json.dumps(MESH)))
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        f.write("\n]}\n")
    print(f"wrote {len(cases)} cases ({sum(1 for c in cases if not c['want'])} valid) to {out}")


if __name__ == "__main__":
    main()
