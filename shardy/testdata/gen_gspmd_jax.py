"""Regenerates gspmd_jax.json: GSPMD HloSharding texts computed by JAX.

For random meshes (with and without Manual/Explicit axis types), partition
specs and ranks it records str(NamedSharding._to_xla_hlo_sharding(rank)),
the text shardy.GSPMD must reproduce. Run with the oracle venv:

    XLA_FLAGS=--xla_force_host_platform_device_count=8 \
      .cache/oracle-venv/bin/python shardy/testdata/gen_gspmd_jax.py
"""
import json
import os
import random

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

SHAPES = [(8,), (4, 2), (2, 4), (2, 2, 2), (1, 8), (8, 1), (2, 1, 4), (1, 1), (1,),
          (2,), (4,), (2, 2), (1, 2, 2, 2), (2, 2, 1, 2)]
TYPES = {AxisType.Auto: "Auto", AxisType.Explicit: "Explicit", AxisType.Manual: "Manual"}


def main():
    rng = random.Random(1)
    devices = jax.devices()
    seen, cases = set(), []
    for shape in SHAPES:
        n = int(np.prod(shape))
        names = tuple("abcd"[: len(shape)])
        for trial in range(120):
            types = tuple(rng.choice(list(TYPES)) for _ in names) if trial % 2 else (AxisType.Auto,) * len(names)
            mesh = Mesh(np.array(devices[:n]).reshape(shape), names, axis_types=types)
            rank = rng.randint(0, 3)
            axes = list(names)
            rng.shuffle(axes)
            used = axes[: rng.randint(0, len(axes))]
            spec = [None] * rank
            for ax in used:
                if rank == 0:
                    break
                d = rng.randrange(rank)
                spec[d] = (spec[d] or ()) + (ax,)
            cut = rng.randint(0, rank)
            if any(spec[cut:]):
                cut = rank
            spec = spec[:cut]
            try:
                text = str(NamedSharding(mesh, P(*spec))._to_xla_hlo_sharding(rank))
            except Exception:  # e.g. a spec naming a Manual axis
                continue
            case = {"sizes": list(shape), "names": list(names), "types": [TYPES[t] for t in types],
                    "spec": [list(x) if x else None for x in spec], "rank": rank, "want": text}
            key = json.dumps(case, sort_keys=True)
            if key not in seen:
                seen.add(key)
                cases.append(case)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gspmd_jax.json")
    with open(out, "w") as f:
        f.write('{"jax": "%s", "cases": [\n' % jax.__version__)
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        f.write("\n]}\n")
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()
