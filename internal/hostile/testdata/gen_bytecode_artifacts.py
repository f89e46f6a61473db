"""Writes bytecode_artifacts.json: real jax.export artifacts whose module is replaced by a
StableHLO portable artifact (MLIR bytecode) of a module the text path refuses.

Each entry is the oracle's "misc" artifact (testdata/oracle/bytecode.json: one float32[8]
argument, 8 devices, cpu) with its mlir_module_serialized swapped for the bytecode of one
hostile module, serialized again by jax.export. Run with the oracle's Python (JAX 0.8.1):

    .cache/oracle-venv/bin/python internal/hostile/testdata/gen_bytecode_artifacts.py
"""

import base64
import dataclasses
import json
import os

from jax import export
from jax._src.lib import xla_client

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
TARGET = "1.13.0"  # the StableHLO version of the oracle's artifacts

HEAD = "module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n"

MODULES = {
    "self-recursive function": HEAD + """  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
""",
    "tensor size overflow": HEAD + """  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.iota dim = 0 : tensor<4611686018427387904xf32>
    %1 = "stablehlo.slice"(%0) <{start_indices = array<i64: 0>, limit_indices = array<i64: 8>, strides = array<i64: 1>}> : (tensor<4611686018427387904xf32>) -> tensor<8xf32>
    %2 = stablehlo.add %arg0, %1 : tensor<8xf32>
    return %2 : tensor<8xf32>
  }
}
""",
    "sdy axis name with an escape": HEAD + """  sdy.mesh @mesh = <["a\\\\b"=8]>
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a\\\\b"}]>}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}
""",
    "sdy axis name with non-ASCII bytes": HEAD + """  sdy.mesh @mesh = <["\\C3\\A9"=8]>
  func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"\\C3\\A9"}]>}) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}
""",
    "infeed": HEAD + """  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.after_all : !stablehlo.token
    %1:2 = "stablehlo.infeed"(%0) <{infeed_config = ""}> : (!stablehlo.token) -> (tensor<8xf32>, !stablehlo.token)
    return %1#0 : tensor<8xf32>
  }
}
""",
    "topk with a string k": HEAD + """  func.func public @main(%arg0: tensor<8xf32>) -> tensor<2xf32> {
    %0:2 = stablehlo.custom_call @mhlo.topk(%arg0) {mhlo.attributes = {k = "2", largest = true}, mhlo.version = 1 : i64} : (tensor<8xf32>) -> (tensor<2xf32>, tensor<2xi32>)
    return %0#0 : tensor<2xf32>
  }
}
""",
    "Sharding with two operands": HEAD + """  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.custom_call @Sharding(%arg0, %arg0) {mhlo.sharding = "{replicated}"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
""",
}


def main():
    with open(os.path.join(ROOT, "testdata", "oracle", "bytecode.json")) as f:
        progs = {p["name"]: p for p in json.load(f)["programs"]}
    base = export.deserialize(bytearray(base64.b64decode(progs["misc"]["exported"])))
    out = {}
    for name, text in MODULES.items():
        # As jax.export writes its modules, Shardy ops and attributes kept (with_sdy).
        code = xla_client._xla.mlir.serialize_portable_artifact(text, TARGET, True)
        exp = dataclasses.replace(base, mlir_module_serialized=code)
        out[name] = base64.b64encode(exp.serialize()).decode()
    with open(os.path.join(HERE, "bytecode_artifacts.json"), "w") as f:
        json.dump({"about": __doc__.strip().splitlines()[0], "artifacts": out}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
