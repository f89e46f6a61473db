"""JAX's own export backward-compatibility test data, as goldens for xlamesh.

JAX keeps, in jax/_src/internal_test_util/export_back_compat_test_data, the serialized
modules its export machinery wrote over the years (2023 on), with the module text, inputs
and JAX's expected outputs, to check that newer JAX still runs them. This script reads
those of the installed JAX and writes them to OUTDIR/backcompat.json:

    {"jax_version", "artifacts": [{"name", "platform", "bytecode_version",
      "xla_call_module_version", "nr_devices", "custom_call_targets", "serialized_date",
      "module" (base64 MLIR bytecode), "text" (JAX's mlir_module_text), "inputs",
      "outputs" (programs.enc_array form)}, ...]}

Nothing is computed here: the data are JAX's, read from its installed package (they change
only with JAX's version). The modules span MLIR bytecode versions 0 to 6, which is what
package mlir/bytecode reads them for.

Usage: .cache/oracle-venv/bin/python tools/oracle/backcompat.py OUTDIR
"""

import base64
import importlib
import json
import os
import pkgutil
import sys

import jax
import numpy as np
from jax._src.internal_test_util import export_back_compat_test_data as data_pkg

from programs import enc_array


def _datasets(mod):
    """Yields (key, data dict) for each test data dict of a module, nested dicts included."""
    for k, v in sorted(vars(mod).items()):
        if not isinstance(v, dict) or k.startswith("_"):
            continue
        if "mlir_module_serialized" in v:
            yield k, v
            continue
        for k2, v2 in sorted(v.items(), key=lambda kv: str(kv[0])):
            if isinstance(v2, dict) and "mlir_module_serialized" in v2:
                yield "%s/%s" % (k, k2), v2


def _bytecode_version(b):
    # MLIR bytecode: "ML\xefR", then the version as a prefix varint (one byte below 128).
    if b[:4] != b"ML\xefR" or not b[4] & 1:
        return -1
    return b[4] >> 1


def generate():
    out = []
    for info in sorted(pkgutil.walk_packages(data_pkg.__path__, data_pkg.__name__ + "."), key=lambda i: i.name):
        if info.ispkg:
            continue
        mod = importlib.import_module(info.name)
        short = info.name[len(data_pkg.__name__) + 1:]
        for key, d in _datasets(mod):
            blob = d["mlir_module_serialized"]
            out.append({
                "name": "%s/%s" % (short, key),
                "platform": d.get("platform"),
                "bytecode_version": _bytecode_version(blob),
                "xla_call_module_version": d.get("xla_call_module_version"),
                "nr_devices": d.get("nr_devices", 1),
                "custom_call_targets": list(d.get("custom_call_targets", [])),
                "serialized_date": str(d.get("serialized_date")),
                "module": base64.b64encode(blob).decode("ascii"),
                "text": d.get("mlir_module_text", ""),
                "inputs": [enc_array(np.asarray(x)) for x in d.get("inputs", ())],
                "outputs": [enc_array(np.asarray(x)) for x in d.get("expected_outputs", ())],
            })
    return out


def main():
    outdir = sys.argv[1]
    arts = generate()
    with open(os.path.join(outdir, "backcompat.json"), "w", encoding="utf-8") as f:
        json.dump({"jax_version": jax.__version__, "generator": "tools/oracle/backcompat.py", "artifacts": arts}, f,
                  indent=1, sort_keys=True)
        f.write("\n")
    print("oracle: %-14s %4d artifacts" % ("backcompat", len(arts)))


if __name__ == "__main__":
    main()
