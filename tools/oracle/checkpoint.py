"""The checkpoint group: JAX's array checkpoints (zarr v2 through tensorstore), for xlamesh's.

generate() returns the document generate.py writes to OUTDIR/checkpoint.json:

- "written": what jax.experimental.array_serialization.serialization writes (JAX 0.12.0.1,
  tensorstore 0.1.86: the zarr driver, zarr v2, zstd, the plain "file" kvstore) for one
  sharded array per case, which xlamesh must restore; and, for the CASES3 cases, what JAX's
  zarr3 driver writes on plain files (tensorstore_impl.get_tensorstore_spec(path,
  ocdbt=False, driver="zarr3", arr=a): raw little-endian chunks under c/, chunks of zeros
  not written; their leading rows are zeros to show it). Each case: {"name", "format":
  "zarr" or "zarr3", "mesh": [4, 2], "axes": ["x", "y"], "spec": [...], "array": array,
  "files": {relpath: base64}}. The spec is the PartitionSpec, an entry per sharded dimension (null, an
  axis name, or a list of names for a tuple entry; [] when replicated). The array is case k's
  (its index in CASES followed by CASES3): floats the pattern of vjp.py with k and scale 8 in the case's type
  (exact in bfloat16, float16 and float8_e4m3fn); complex64 the pattern k plus 1j times the
  pattern k+1 (scale 8); integers the pattern with scale 1 (-8..8), for int4 with 8 taken down to
  7; bool the pattern (scale 8) > 0. It is put on jax.make_mesh(mesh, axes) (the 8 CPU
  devices) with NamedSharding(mesh, P(*spec)) and serialized with
  GlobalAsyncCheckpointManager().serialize([a], [get_tensorstore_spec(path)]) and
  wait_until_finished(); "files" holds every file under the array's directory (".zarray" and
  the chunks, "0.0", "1.0", ..., "0" for a scalar), keyed by its path there. One chunk per
  distinct shard (the shard shape, 1 for a size-0 dimension), written by the replica 0 of
  each. Each checkpoint is read back by JAX with its own sharding and must give the array's
  bits again.
- "read": what JAX restores from checkpoints xlamesh wrote: the cases of
  testdata/checkpoint/xlamesh.json ({"cases": [{"name", "format" ("zarr", "zarr3" or
  "orbax"), "dtype" (a numpy dtype name), "shape", "files": {relpath: base64}}]}; an "orbax"
  case is a checkpoint in Orbax's layout holding one array named by its "array_name"
  ("params.x": nested dictionary keys), restored by orbax-checkpoint's StandardCheckpointer
  with a target tree, and without one, which must agree; the environment variable
  XLAMESH_ORACLE_CHECKPOINT_FIXTURE names another file of that form, for work on this
  generator). Each case's files are laid out in a directory of its name and restored with
  GlobalAsyncCheckpointManager().deserialize(shardings, specs, global_shapes, dtypes) for
  each target sharding that divides the shape: replicated on the (4, 2) ("x", "y") mesh;
  P("x") on the (8,) ("x",) mesh when the first dimension divides by 8; P("x", "y") on the
  (4, 2) mesh when the array has two dimensions or more and they divide. Each case:
  {"name", "restored": [{"mesh", "axes", "spec", "array"}, ...]}. Every addressable shard
  must hold the global array's slice and every target the same array, or generation stops.
  No fixture file, no cases.

Arrays are vjp.arr's form ("hex" with the raw bytes beyond the plain types). tensorstore
0.1.86 refuses uint4 in zarr v2 ('Unsupported data type: "uint4"'), so no case has it; every
other type here it writes. Output is deterministic: the temporary paths are not recorded,
file names are sorted, and zstd at level 1 writes the same bytes every run.
"""

import base64
import importlib.metadata
import json
import os
import shutil
import tempfile

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import orbax.checkpoint as ocp
from jax.experimental.array_serialization import serialization, tensorstore_impl
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from vjp import arr, pattern

TENSORSTORE = "0.1.86"
ORBAX = "0.12.8"
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FIXTURE = os.path.join(ROOT, "testdata", "checkpoint", "xlamesh.json")
FIXTURE_ENV = "XLAMESH_ORACLE_CHECKPOINT_FIXTURE"
MESH, AXES = (4, 2), ("x", "y")


class CheckpointError(Exception):
    pass


# name, dtype, shape, spec; all on the (4, 2) ("x", "y") mesh.
CASES = [
    ("f32_rows", "float32", [8, 6], ["x", None]),
    ("f32_cols", "float32", [4, 8], [None, "y"]),
    ("f32_tiles", "float32", [8, 4], ["x", "y"]),
    ("f32_xy_flat", "float32", [16], [["x", "y"]]),
    ("f32_replicated", "float32", [4, 6], []),
    ("f32_scalar", "float32", [], []),
    ("bf16_tiles", "bfloat16", [8, 4], ["x", "y"]),
    ("i32_swapped", "int32", [4, 8], ["y", "x"]),
    ("f16_rows", "float16", [8, 3], ["x"]),
    ("bool_rows", "bool", [8, 2], ["x"]),
    ("i8_cols", "int8", [2, 8], [None, "x"]),
    ("f8e4m3fn_rows", "float8_e4m3fn", [8, 2], ["x"]),
    ("i4_rows", "int4", [8, 4], ["x"]),
    ("c64_rows", "complex64", [8, 2], ["x"]),
]

# The zarr3 cases (the layout JAX's zarr3 driver writes on plain files): name, dtype, shape,
# spec, and how many leading rows are zeros (chunks of zeros are not written).
CASES3 = [
    ("z3_f32_rows", "float32", [8, 6], ["x", None], 4),
    ("z3_bf16_tiles", "bfloat16", [8, 4], ["x", "y"], 0),
    ("z3_i32_zeros", "int32", [4, 8], ["x"], 4),
    ("z3_bool_scalar", "bool", [], [], 0),
    ("z3_i4_cols", "int4", [2, 8], [None, "y"], 0),
]


def to_p(spec):
    return P(*[tuple(e) if isinstance(e, list) else e for e in spec])


def value(k, dtype, shape):
    """Case k's array (see the module's docstring)."""
    if dtype == "bool":
        return pattern(shape, k, 8) > 0
    if dtype == "complex64":
        return (pattern(shape, k, 8) + 1j * pattern(shape, k + 1, 8)).astype(np.complex64)
    dt = jnp.dtype(dtype)
    if np.issubdtype(dt, np.integer) or dt == ml_dtypes.int4:
        v = pattern(shape, k, 1, np.int64)
        if dt == ml_dtypes.int4:
            v = np.minimum(v, 7)
        return v.astype(dt)
    return pattern(shape, k, 8, dt)


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def files_of(path):
    out = {}
    for d, _, names in os.walk(path):
        for n in names:
            full = os.path.join(d, n)
            with open(full, "rb") as fh:
                out[os.path.relpath(full, path).replace(os.sep, "/")] = base64.b64encode(fh.read()).decode()
    return dict(sorted(out.items()))


def spec_of(path, fmt, a=None):
    """The tensorstore spec JAX uses for an array at path in format fmt ("zarr" or "zarr3"),
    with the array's metadata when a is given (as JAX writes it)."""
    if fmt == "zarr":
        return serialization.get_tensorstore_spec(path)
    return tensorstore_impl.get_tensorstore_spec(path, ocdbt=False, driver="zarr3", arr=a)


def restore(path, sharding, shape, dtype, fmt="zarr", array_name=None):
    if fmt == "orbax":
        return restore_orbax(path, sharding, shape, dtype, array_name)
    m = serialization.GlobalAsyncCheckpointManager()
    [a] = m.deserialize([sharding], [spec_of(path, fmt)],
                        global_shapes=[tuple(shape)], dtypes=[dtype])
    return a


def restore_orbax(path, sharding, shape, dtype, array_name):
    """Restores the array array_name ("params.x": dictionary keys joined by ".") of an Orbax
    checkpoint with orbax's StandardCheckpointer, given a target tree, and checks that a
    restore without a target (from the checkpoint's _METADATA) gives the same bits."""
    keys = array_name.split(".")
    target = jax.ShapeDtypeStruct(tuple(shape), dtype, sharding=sharding)
    for k in reversed(keys):
        target = {k: target}
    got = ocp.StandardCheckpointer().restore(path, target)
    untargeted = ocp.StandardCheckpointer().restore(path)
    for k in keys:
        got, untargeted = got[k], untargeted[k]
    if not same(got, untargeted):
        raise CheckpointError("checkpoint %s: Orbax restores other values without a target" % path)
    return got


def check_shards(name, a):
    full = np.asarray(a)
    for sh in a.addressable_shards:
        if not same(sh.data, full[sh.index]):
            raise CheckpointError("checkpoint %s: the shard on device %d is not the array's %s"
                                  % (name, sh.device.id, sh.index))
    return full


def written(tmp):
    mesh = jax.make_mesh(MESH, AXES)
    cases = [(name, dtype, shape, spec, 0, "zarr") for name, dtype, shape, spec in CASES]
    cases += [(name, dtype, shape, spec, zeros, "zarr3") for name, dtype, shape, spec, zeros in CASES3]
    out = []
    for k, (name, dtype, shape, spec, zeros, fmt) in enumerate(cases):
        x = value(k, dtype, shape)
        if zeros:
            x[:zeros] = 0
        s = NamedSharding(mesh, to_p(spec))
        a = jax.device_put(x, s)
        path = os.path.join(tmp, "written", name)
        m = serialization.GlobalAsyncCheckpointManager()
        m.serialize([a], [spec_of(path, fmt, a)], on_commit_callback=lambda: None)
        m.wait_until_finished()
        back = check_shards(name, restore(path, s, shape, jnp.dtype(dtype), fmt))
        if not same(back, x):
            raise CheckpointError("checkpoint %s: JAX reads back other bits than it wrote" % name)
        out.append({"name": name, "format": fmt, "mesh": list(MESH), "axes": list(AXES), "spec": spec,
                    "array": arr(x), "files": files_of(path)})
    return out


def targets(shape):
    """The target shardings of a restored case: (mesh, axes, spec) each."""
    out = [(MESH, AXES, [])]
    if len(shape) >= 1 and shape[0] % 8 == 0:
        out.append(((8,), ("x",), ["x"]))
    if len(shape) >= 2 and shape[0] % MESH[0] == 0 and shape[1] % MESH[1] == 0:
        out.append((MESH, AXES, ["x", "y"]))
    return out


def read(tmp, fixture):
    if not os.path.exists(fixture):
        return []
    with open(fixture, encoding="utf-8") as fh:
        doc = json.load(fh)
    out = []
    seen = set()
    for case in doc["cases"]:
        name = case["name"]
        if name in seen or not name or "/" in name or name.startswith("."):
            raise CheckpointError("checkpoint: fixture case name %r is a duplicate or not a plain name" % name)
        seen.add(name)
        path = os.path.join(tmp, "read", name)
        for rel, b64 in case["files"].items():
            full = os.path.join(path, *rel.split("/"))
            if os.path.relpath(full, path).startswith(".."):
                raise CheckpointError("checkpoint %s: file %r outside the array's directory" % (name, rel))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as fh:
                fh.write(base64.b64decode(b64))
        shape, dtype, fmt = case["shape"], jnp.dtype(case["dtype"]), case.get("format", "zarr")
        array_name = case.get("array_name")
        restored, first = [], None
        for mshape, axes, spec in targets(shape):
            s = NamedSharding(jax.make_mesh(mshape, axes), to_p(spec))
            try:
                got = check_shards(name, restore(path, s, shape, dtype, fmt, array_name))
            except CheckpointError:
                raise
            except Exception as e:  # noqa: BLE001 - JAX's refusal is the finding
                raise CheckpointError("checkpoint %s: JAX cannot restore it on %s %s: %s: %s"
                                      % (name, list(mshape), spec, type(e).__name__, e))
            if first is None:
                first = got
            elif not same(got, first):
                raise CheckpointError("checkpoint %s: JAX restores other values on %s %s"
                                      % (name, list(mshape), spec))
            restored.append({"mesh": list(mshape), "axes": list(axes), "spec": spec, "array": arr(got)})
        out.append({"name": name, "restored": restored})
    return out


def generate():
    have = importlib.metadata.version("tensorstore")
    if have != TENSORSTORE:
        raise CheckpointError("checkpoint: want tensorstore %s, have %s" % (TENSORSTORE, have))
    if ocp.__version__ != ORBAX:
        raise CheckpointError("checkpoint: want orbax-checkpoint %s, have %s" % (ORBAX, ocp.__version__))
    tmp = tempfile.mkdtemp(prefix="xlamesh-oracle-checkpoint-")
    try:
        return {"written": written(tmp), "read": read(tmp, os.environ.get(FIXTURE_ENV) or FIXTURE)}
    finally:
        shutil.rmtree(tmp)
