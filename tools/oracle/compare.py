"""Compares a checked-in oracle golden with one regenerated from JAX (tools/oracle/check.sh).

usage: python3 compare.py CHECKED_IN REGENERATED

The two must be the same JSON, except that a float32 array ({"dtype": "float32", "values": [...]})
may differ by rounding: each value within 1e-6 of the array's largest magnitude (the tolerance
internal/oracletest compares xlamesh with), NaN against NaN, infinities equal; a float outside
such an array (a loss) within 1e-6 of its own magnitude. XLA's CPU code,
JAX's too, rounds float32 reductions by the vector instructions of the processor it runs on, so
goldens written on one processor are not bit-equal on another; anything else that differs
(structure, shapes, dtypes, integers, text, artifacts) fails. linalg.json's float and complex
arrays, LAPACK's results, may differ by LAPACK_TOL of their largest magnitude instead. Prints how
many arrays matched only within the tolerance; exits 1 with the first difference otherwise.
"""
import json
import math
import os
import sys

TOL = 1e-6

# linalg.json's results come from LAPACK, whose builds and processors round differently: each
# float and complex array there (complex values as [real, imaginary] pairs) may differ by this
# much of its largest magnitude, by dtype.
LAPACK_TOL = {"float32": 1e-5, "complex64": 1e-5, "float64": 1e-12, "complex128": 1e-12}


def close_f32(a, b, path, tol=TOL):
    if all(isinstance(v, list) for v in a + b):  # complex values: compare the parts
        if len(a) != len(b):
            return f"{path}: {len(a)} values checked in, {len(b)} regenerated"
        a = [x for pair in a for x in pair]
        b = [x for pair in b for x in pair]
    if len(a) != len(b):
        return f"{path}: {len(a)} values checked in, {len(b)} regenerated"
    finite = [abs(x) for x in a if isinstance(x, (int, float)) and math.isfinite(x)]
    scale = max(finite, default=0.0)
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y:
            continue
        if not all(isinstance(v, (int, float)) for v in (x, y)):
            return f"{path}[{i}]: {x!r} checked in, {y!r} regenerated"
        if math.isnan(x) and math.isnan(y):
            continue
        if not (math.isfinite(x) and math.isfinite(y)) or abs(x - y) > tol * scale:
            return f"{path}[{i}]: {x!r} checked in, {y!r} regenerated (beyond {tol} of {scale})"
    return None


def compare(a, b, path, near, lapack=False):
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} checked in, {type(b).__name__} regenerated"
    if isinstance(a, dict):
        if sorted(a) != sorted(b):
            return f"{path}: keys {sorted(a)} checked in, {sorted(b)} regenerated"
        tol = LAPACK_TOL.get(a.get("dtype")) if lapack else TOL if a.get("dtype") == "float32" else None
        if tol is not None and isinstance(a.get("values"), list) and a["values"] != b["values"]:
            for k in a:
                if k != "values" and a[k] != b[k]:
                    return f"{path}.{k}: {a[k]!r} checked in, {b[k]!r} regenerated"
            err = close_f32(a["values"], b["values"], f"{path}.values", tol)
            if err is None:
                near.append(path)
            return err
        for k in a:
            err = compare(a[k], b[k], f"{path}.{k}", near, lapack)
            if err:
                return err
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items checked in, {len(b)} regenerated"
        for i, (x, y) in enumerate(zip(a, b)):
            err = compare(x, y, f"{path}[{i}]", near, lapack)
            if err:
                return err
        return None
    if isinstance(a, float) and a != b:
        # A float outside an array (a loss, a scalar result) is float32 computed by XLA: within
        # 1e-6 of its own magnitude. Multithreaded CPU reductions may reorder between runs too.
        if math.isnan(a) and math.isnan(b):
            return None
        if math.isfinite(a) and math.isfinite(b) and abs(a - b) <= TOL * max(abs(a), abs(b)):
            near.append(path)
            return None
    if a != b:
        return f"{path}: {a!r} checked in, {b!r} regenerated"
    return None


def main():
    old, new = sys.argv[1], sys.argv[2]
    with open(old) as f:
        a = json.load(f)
    with open(new) as f:
        b = json.load(f)
    near = []
    err = compare(a, b, "", near, os.path.basename(old) == "linalg.json")
    if err:
        print(f"{old}: {err}", file=sys.stderr)
        return 1
    print(f"{old}: equal but for {len(near)} float values or arrays within their tolerance (relative)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
