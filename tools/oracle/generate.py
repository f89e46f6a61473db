"""Asks JAX about every case in cases.py and writes the answers as goldens.

Usage (normally through tools/oracle/generate.sh, which sets the environment):

    JAX_PLATFORMS=cpu XLA_FLAGS=--xla_force_host_platform_device_count=8 \
        python tools/oracle/generate.py OUTDIR [GROUP...]

Writes OUTDIR/<group>.json for each group in cases.GROUPS, for each op
group module tools/oracle/ops_*.py (its GROUP and generate()),
OUTDIR/programs.json for the programs corpus in programs.py, and
OUTDIR/vjp.json for the derivatives of vjp.py and OUTDIR/optim.json for
optax's optimizers (optim.py) and OUTDIR/gpt.json for the JAX twin of
examples/gpt (gpt.py), OUTDIR/checkpoint.json for JAX's array
checkpoints, written and restored (checkpoint.py) and OUTDIR/memory_kinds.json
for memory kinds (memory_kinds.py); with GROUPs after OUTDIR, only those (a
group name, "programs", "vjp", "optim", "gpt", "checkpoint" or
"memory_kinds"). Output is deterministic: sorted keys, no timestamps, no
object addresses. A case whose JAX outcome contradicts the corpus (an error
where none was expected, or the reverse, or an error message lacking one of
the case's phrases) stops the run: the corpus states facts, and a wrong fact
must be fixed, not recorded.
"""

import contextlib
import dataclasses
import importlib
import importlib.metadata
import io
import json
import math
import os
import re
import sys
import warnings

warnings.simplefilter("ignore")  # make_mesh's axis_types deprecation notice

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jaxlib  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax._src import array as jax_array  # noqa: E402
from jax._src import sharding_impls  # noqa: E402
from jax.experimental import mesh_utils  # noqa: E402
from jax.sharding import AbstractMesh, AxisType, Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402
import checkpoint  # noqa: E402
import memory_kinds  # noqa: E402
import programs  # noqa: E402
import programs_poly  # noqa: E402
import programs_types  # noqa: E402
import gpt  # noqa: E402
import optim  # noqa: E402
import pretty_forms  # noqa: E402
import vjp  # noqa: E402

TYPES = {"Auto": AxisType.Auto, "Explicit": AxisType.Explicit, "Manual": AxisType.Manual}
DTYPES = {"f32": np.float32, "i32": np.int32}


class CaseError(Exception):
    pass


# ---------------------------------------------------------------------------
# Encoding helpers.

def to_p(spec):
    out = []
    for e in spec:
        if e == cases.U:
            out.append(P.UNCONSTRAINED)
        elif isinstance(e, list):
            out.append(tuple(e))
        else:
            out.append(e)
    return P(*out)


def from_p(p):
    out = []
    for e in p:
        if e is P.UNCONSTRAINED:
            out.append(cases.U)
        elif isinstance(e, tuple):
            out.append(list(e))
        else:
            out.append(e)
    return out


def types_of(m):
    if "types" not in m:
        return tuple(AxisType.Auto for _ in m["names"])
    return tuple(TYPES[t] for t in m["types"])


def make_mesh(m):
    if not m["shape"]:
        return Mesh(np.empty((), dtype=object), ())  # JAX's empty mesh
    devs = jax.devices()
    ids = m.get("devices", list(range(math.prod(m["shape"]))))
    arr = np.array([devs[i] for i in ids], dtype=object).reshape(m["shape"])
    return Mesh(arr, tuple(m["names"]), axis_types=types_of(m))


def ranges(index, shape):
    out = []
    for sl, n in zip(index, shape):
        start, stop, step = sl.indices(n)
        assert step == 1, sl
        out.append([start, stop])
    return out


# JAX 0.12 ends some errors with the caller's file and line; the golden keeps
# the words, not the generator's path.
_AT_SOURCE = re.compile(r" This error occurs at source: .*$", re.S)


def err(e):
    return {"class": type(e).__name__, "message": _AT_SOURCE.sub("", str(e))}


def run(case, fn):
    """Runs fn; checks the outcome against the case's error expectation."""
    want_err = bool(case.get("error"))
    try:
        got = fn()
    except CaseError:
        raise
    except Exception as e:  # noqa: BLE001 - every JAX error class is data here
        if not want_err:
            raise CaseError("case %s: unexpected %s: %s" % (case["name"], type(e).__name__, e))
        for ph in case.get("phrases", []):
            if ph not in str(e):
                raise CaseError("case %s: phrase %r not in JAX message %r" % (case["name"], ph, str(e)))
        return {"error": err(e)}
    if want_err:
        raise CaseError("case %s: JAX raised no error (got %r)" % (case["name"], got))
    return got


def record(case, result):
    out = {k: v for k, v in case.items() if k != "error"}
    out["expect_error"] = bool(case.get("error"))
    out["jax"] = result
    return out


# ---------------------------------------------------------------------------
# Groups.

def mesh_props(mesh):
    return {
        "axis_names": list(mesh.axis_names),
        "axis_sizes": list(mesh.axis_sizes),
        "axis_types": [repr(t) for t in mesh.axis_types],
        "size": mesh.size,
        "shape": [[k, v] for k, v in mesh.shape.items()],
        "device_ids": [] if mesh.empty else [int(i) for i in np.asarray(mesh.device_ids).flat],
        "str": str(mesh),
        "repr": repr(mesh),
    }


def gen_mesh(case):
    return run(case, lambda: mesh_props(make_mesh(case["mesh"])))


def gen_make_mesh(case):
    def f():
        kw = {}
        if "types" in case:
            kw["axis_types"] = tuple(getattr(AxisType, t) for t in case["types"])
        m = jax.make_mesh(tuple(case["shape"]), tuple(case["names"]), **kw)
        return mesh_props(m)
    return run(case, f)


def gen_abstract(case):
    def f():
        m = case["mesh"]
        a = AbstractMesh(tuple(m["shape"]), tuple(m["names"]), axis_types=types_of(m))
        return {"axis_names": list(a.axis_names), "axis_sizes": list(a.axis_sizes),
                "axis_types": [repr(t) for t in a.axis_types], "size": a.size,
                "str": str(a), "repr": repr(a)}
    return run(case, f)


def gen_spec(case):
    def f():
        p = to_p(case["spec"])
        return {"canonical": from_p(p), "len": len(p), "repr": repr(p)}
    return run(case, f)


def gen_sharding(case):
    def f():
        mesh = make_mesh(case["mesh"])
        s = NamedSharding(mesh, to_p(case["spec"]))
        shape = tuple(case["shape"])
        s.check_compatible_aval(shape)
        shard_shape = s.shard_shape(shape)
        dim = s.devices_indices_map(shape)
        x = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
        # JAX 0.12's device_put fails on P.UNCONSTRAINED (KeyError from its
        # Explicit-axes check) although its geometry is that of None; the
        # placement is cross-checked with None there, against dim above.
        placed = s if cases.U not in case["spec"] else NamedSharding(
            mesh, to_p([None if e == cases.U else e for e in case["spec"]]))
        arr = jax.device_put(x, placed)
        shards = {sh.device.id: sh for sh in arr.addressable_shards}
        devices = []
        for d in mesh.devices.flat:
            sh = shards[d.id]
            assert sh.index == dim[d], (case["name"], sh.index, dim[d])
            assert np.array_equal(np.asarray(sh.data), x[sh.index]), case["name"]
            devices.append({"id": d.id, "index": ranges(dim[d], shape), "replica_id": sh.replica_id})
        assert [sh.device.id for sh in arr.addressable_shards] == [d["id"] for d in devices], case["name"]
        return {
            "spec_repr": repr(s.spec),
            "shard_shape": list(shard_shape),
            "is_fully_replicated": bool(s.is_fully_replicated),
            "hlo_sharding": str(s._to_xla_hlo_sharding(len(shape))),
            "devices": devices,
        }
    return run(case, f)


def to_rules(rules):
    if not isinstance(rules, list):
        return rules

    def conv(x):
        if isinstance(x, list):
            return tuple(conv(e) for e in x)
        return x
    return tuple((r[0], conv(r[1])) for r in rules)


def gen_flax(case):
    from flax.linen import partitioning as nnp

    def f():
        names = tuple(P.UNCONSTRAINED if n == cases.U else n for n in case["names"])
        p = nnp.logical_to_mesh_axes(names, to_rules(case["rules"]))
        return {"result": from_p(p), "repr": repr(p)}
    return run(case, f)


def gen_flax_constraint(case):
    from flax.linen import spmd as nn_spmd

    def f():
        mesh = make_mesh(cases.M_DM)
        names = None if case["names"] is None else \
            tuple(P.UNCONSTRAINED if n == cases.U else n for n in case["names"])
        fb = getattr(nn_spmd.RulesFallback, case["fallback"])
        rules = to_rules(case["rules"])
        fn = jax.jit(lambda x: nn_spmd.with_logical_constraint(x, names, rules=rules, mesh=mesh, fallback=fb))
        text = fn.lower(jax.ShapeDtypeStruct(tuple(case["shape"]), np.float32)).as_text()
        found = re.findall(r"sdy\.sharding_constraint %\S+ (<.*>) : ", text)
        assert len(found) <= 1, text
        return {"constraint": found[0] if found else None}
    return run(case, f)


@dataclasses.dataclass(frozen=True)
class FakeDevice:
    """A TPU- or GPU-like device: the attributes mesh_utils reads, nothing else."""
    id: int
    platform: str
    device_kind: str
    process_index: int
    coords: tuple
    core_on_chip: int
    slice_index: int


def fake_gpus(topo):
    """GPUs in the order of topo["gpus"], split evenly over topo["processes"]."""
    ids = topo["gpus"]
    per = len(ids) // topo["processes"]
    return [FakeDevice(id=i, platform="gpu", device_kind=topo["kind"], process_index=k // per,
                       coords=(), core_on_chip=0, slice_index=0) for k, i in enumerate(ids)]


def fake_devices(topo):
    """Devices of one or more TPU slices, in the order a TPU runtime lists them:
    by slice, then by host (each host owns a 2x2x1 block of chips; hosts
    ordered z, y, x), then by chip inside the host (y, x), then by core.
    Ids number the chips by global coordinates, x fastest, then y, z, slice,
    with the cores of a chip adjacent."""
    if "gpus" in topo:
        return fake_gpus(topo)
    x, y, z = topo["chips"]
    cores = topo["cores"]
    hx, hy = min(2, x), min(2, y)
    out = []
    host = 0
    for sl in range(topo["slices"]):
        for hz in range(z):
            for hyi in range(y // hy):
                for hxi in range(x // hx):
                    for cy in range(hy):
                        for cx in range(hx):
                            gx, gy = hxi * hx + cx, hyi * hy + cy
                            for core in range(cores):
                                out.append(FakeDevice(
                                    id=core + cores * (gx + x * (gy + y * (hz + z * sl))),
                                    platform="tpu", device_kind=topo["kind"],
                                    process_index=host, coords=(gx, gy, hz),
                                    core_on_chip=core, slice_index=sl))
                    host += 1
    if topo["reverse"]:
        out.reverse()
    return out


def dev_json(d):
    return {"id": d.id, "kind": d.device_kind, "platform": d.platform, "process_index": d.process_index,
            "coords": list(d.coords), "core_on_chip": d.core_on_chip, "slice_index": d.slice_index}


def case_devices(case):
    if case.get("cpu"):
        return list(jax.devices()), None
    devs = fake_devices(case["topo"])
    return devs, [dev_json(d) for d in devs]


def gen_mesh_utils(case):
    devs, listing = case_devices(case)

    def f():
        arr = mesh_utils.create_device_mesh(
            tuple(case["shape"]), devices=devs,
            contiguous_submeshes=case.get("contiguous_submeshes", False),
            allow_split_physical_axes=case.get("allow_split_physical_axes", False))
        ids = [d.id for d in arr.flat]
        if "expect_ids" in case and ids != case["expect_ids"]:
            raise CaseError("case %s: JAX gives ids %s, corpus says %s" % (case["name"], ids, case["expect_ids"]))
        return {"shape": list(arr.shape), "ids": ids}
    out = run(case, f)
    if listing is not None:
        out["input_devices"] = listing
    return out


def gen_hybrid(case):
    devs, listing = case_devices(case)

    def f():
        arr = mesh_utils.create_hybrid_device_mesh(tuple(case["shape"]), tuple(case["dcn"]), devices=devs)
        ids = [d.id for d in arr.flat]
        if "expect_ids" in case and ids != case["expect_ids"]:
            raise CaseError("case %s: JAX gives ids %s, corpus says %s" % (case["name"], ids, case["expect_ids"]))
        return {"shape": list(arr.shape), "ids": ids}
    out = run(case, f)
    out["input_devices"] = listing
    return out


def gen_visualize(case):
    def f():
        mesh = make_mesh(case["mesh"])
        s = NamedSharding(mesh, to_p(case["spec"]))
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            jax.debug.visualize_sharding(tuple(case["shape"]), s, use_color=False)
        return {"text": buf.getvalue()}
    return run(case, f)


def _programs(mesh):
    def ns(*spec):
        return NamedSharding(mesh, to_p(list(spec)))

    def mul2(x):
        return x * jnp.asarray(2, x.dtype)

    def wsc_none_y(x):
        y = jax.lax.with_sharding_constraint(x * 2, ns(None, "y"))
        return y + 1

    def wsc_x_u(x):
        y = jax.lax.with_sharding_constraint(x * 2, ns("x", cases.U))
        return y + 1

    def smap_psum_x(x):
        return jax.shard_map(lambda b: jax.lax.psum(b, "x"), mesh=mesh,
                             in_specs=P("x", None), out_specs=P())(x)

    def smap_psum_xy(x):
        return jax.shard_map(lambda b: jax.lax.psum(b, "x"), mesh=mesh,
                             in_specs=P("x", "y"), out_specs=P(None, "y"))(x)

    def smap_psum_x_partial(x):
        return jax.shard_map(lambda b: jax.lax.psum(b, "x"), mesh=mesh, axis_names={"x"},
                             in_specs=P("x", None), out_specs=P())(x)

    def smap_psum_xy_tuple(x):
        return jax.shard_map(lambda b: jax.lax.psum(b, ("x", "y")), mesh=mesh,
                             in_specs=P(("x", "y"), "z"), out_specs=P(None, "z"))(x)

    def smap_all_gather_x(x):
        return jax.shard_map(lambda b: jax.lax.all_gather(b, "x", axis=0, tiled=True), mesh=mesh,
                             in_specs=P("x", None), out_specs=P(), check_vma=False)(x)

    return {
        "smap_psum_x_partial": smap_psum_x_partial,
        "smap_psum_xy_tuple": smap_psum_xy_tuple,
        "smap_all_gather_x": smap_all_gather_x,
        "mul2": mul2,
        "add": lambda x, y: x + y,
        "matmul": lambda x, w: x @ w,
        "sum0": lambda x: jnp.sum(x, axis=0),
        "sum_all": lambda x: jnp.sum(x),
        "wsc_none_y": wsc_none_y,
        "wsc_x_u": wsc_x_u,
        "smap_psum_x": smap_psum_x,
        "smap_psum_xy": smap_psum_xy,
    }


def gen_lowering(case):
    def f():
        mesh = make_mesh(case["mesh"])
        fn = _programs(mesh)[case["program"]]
        in_sh = tuple(NamedSharding(mesh, to_p(a["spec"])) for a in case["args"])
        out_sh = NamedSharding(mesh, to_p(case["out"]))
        jf = jax.jit(fn, in_shardings=in_sh, out_shardings=out_sh)
        # Error cases lower bare avals, so the error is jit's own (device_put
        # would reject an indivisible argument first, in its own words). The
        # others lower the committed arrays they then run on, as a user's
        # jit call does (on meshes with Explicit axes the arrays' sharding
        # types add sharding constraints to the module).
        if case.get("error"):
            args = [jax.ShapeDtypeStruct(tuple(a["shape"]), DTYPES[a["dtype"]]) for a in case["args"]]
        else:
            args = []
            for a, s in zip(case["args"], in_sh):
                x = np.arange(math.prod(a["shape"])).astype(DTYPES[a["dtype"]]).reshape(a["shape"])
                args.append(jax.device_put(x, s))
        gspmd = case.get("partitioner") == "gspmd"
        prev = jax.config.jax_use_shardy_partitioner
        jax.config.update("jax_use_shardy_partitioner", not gspmd)
        try:
            text = jf.lower(*args).as_text()
        finally:
            jax.config.update("jax_use_shardy_partitioner", prev)
        y = np.asarray(jf(*args))
        want = np.asarray(fn(*[np.asarray(a) for a in args]))
        assert np.array_equal(y, want), case["name"]
        return {"stablehlo": text,
                "result": {"shape": list(y.shape), "dtype": str(y.dtype),
                           "values": [v.item() for v in y.reshape(-1)]}}
    return run(case, f)


# ---------------------------------------------------------------------------
# multiprocess: the bookkeeping of a mesh spread over several processes, seen
# from each of them. JAX answers with its own helpers (get_process_index_and_count,
# local_to_global_shape, num_addressable_indices, _array_from_process_local_data)
# applied to a NamedSharding over the real CPU devices whose devices are seen as
# the simulated devices of the case, process by process.

class SimSharding:
    """The NamedSharding ns as process `process` of a simulated multi-process job
    sees it: every real device stands for the simulated device at the same mesh
    position. It has exactly the attributes JAX's process-local helpers read;
    geometry is ns's own."""

    def __init__(self, ns, fake_of, process):
        self.ns, self.fake_of, self.process = ns, fake_of, process
        self.num_devices = ns.num_devices
        self.is_fully_replicated = ns.is_fully_replicated
        self.is_fully_addressable = all(f.process_index == process for f in fake_of.values())
        self.addressable_devices = {f for f in fake_of.values() if f.process_index == process}

    def devices_indices_map(self, shape):
        return {self.fake_of[d]: idx for d, idx in self.ns.devices_indices_map(shape).items()}

    def addressable_devices_indices_map(self, shape):
        return {f: idx for f, idx in self.devices_indices_map(shape).items() if f.process_index == self.process}

    def shard_shape(self, shape):
        return self.ns.shard_shape(shape)


@contextlib.contextmanager
def recording_callbacks():
    """Makes jax's make_array_from_callback (as _array_from_process_local_data calls
    it) return, instead of an array, what the callback gives each addressable
    device, in mesh order: [device id, flat values]."""
    def record(shape, sharding, cb):
        return [[d.id, [v.item() for v in np.asarray(cb(idx)).reshape(-1)]]
                for d, idx in sharding.addressable_devices_indices_map(shape).items()]
    saved = jax_array.make_array_from_callback
    jax_array.make_array_from_callback = record
    try:
        yield
    finally:
        jax_array.make_array_from_callback = saved


def gen_multiprocess(case):
    devs = fake_devices(case["topo"])
    shape = tuple(case["mesh_shape"])
    if case.get("order") == "create":
        arr = mesh_utils.create_device_mesh(shape, devices=devs)
    elif "perm" in case:
        arr = np.array([devs[i] for i in case["perm"]], dtype=object).reshape(shape)
    else:
        arr = np.array(devs, dtype=object).reshape(shape)
    fakes = list(arr.flat)
    real = jax.devices()[:len(fakes)]
    mesh = Mesh(np.array(real, dtype=object).reshape(shape), tuple(case["names"]))
    ns = NamedSharding(mesh, to_p(case["spec"]))
    fake_of = dict(zip(real, fakes))
    gshape = tuple(case["shape"])
    rank = len(gshape)
    processes = sorted({f.process_index for f in fakes})

    def f():
        if case.get("error"):
            p = case["process"]
            sim = SimSharding(ns, fake_of, p)
            local = np.arange(math.prod(case["local"]), dtype=np.int32).reshape(case["local"])
            with recording_callbacks():
                return jax_array._array_from_process_local_data(local, sim, gshape)
        replica = sharding_impls.device_replica_id_map(ns, gshape)
        idx = ns.devices_indices_map(gshape)
        out = []
        for p in processes:
            sim = SimSharding(ns, fake_of, p)
            holds = [[fake_of[d].id, ranges(idx[d], gshape), int(replica[d])]
                     for d in mesh.devices.flat if fake_of[d].process_index == p]
            counts = []
            for dim in range(rank):
                try:
                    counts.append(sharding_impls.get_process_index_and_count(sim, dim, rank)[1])
                except sharding_impls.NonUniformShardingError:
                    counts.append(None)
            local_shape = [sharding_impls.num_addressable_indices(sim, dim, gshape) for dim in range(rank)]
            inferred = list(sharding_impls.local_to_global_shape(sim, tuple(local_shape)))
            local = np.arange(math.prod(local_shape), dtype=np.int32).reshape(local_shape)
            with recording_callbacks():
                builds = jax_array._array_from_process_local_data(local, sim, gshape)
            out.append({"process": p, "holds": holds, "counts": counts, "local_shape": local_shape,
                        "inferred_global_shape": inferred, "builds": builds})
        return {"processes": out}
    result = run(case, f)
    result["mesh_devices"] = [dev_json(d) for d in fakes]
    return result


GENERATORS = {
    "mesh": gen_mesh, "make_mesh": gen_make_mesh, "abstract_mesh": gen_abstract, "spec": gen_spec,
    "sharding": gen_sharding, "flax": gen_flax, "flax_constraint": gen_flax_constraint, "mesh_utils": gen_mesh_utils, "hybrid_mesh": gen_hybrid,
    "visualize": gen_visualize, "lowering": gen_lowering,
    "multiprocess": gen_multiprocess,
}


# ---------------------------------------------------------------------------
# Deterministic JSON: sorted keys, one case per block, short scalar lists inline.

def dump(v, indent=0):
    pad = " " * indent
    if isinstance(v, dict):
        if not v:
            return "{}"
        if all(not isinstance(e, dict) for e in v.values()):
            flat = json.dumps(v, ensure_ascii=False, sort_keys=True)
            if len(flat) <= 100 and "\n" not in flat:
                return flat
        items = ["%s %s: %s" % (pad, json.dumps(k), dump(v[k], indent + 1)) for k in sorted(v)]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(v, list):
        if all(not isinstance(e, (dict, list)) for e in v) or \
                all(isinstance(e, list) and all(not isinstance(f, (dict, list)) for f in e) for e in v):
            return json.dumps(v, ensure_ascii=False)
        items = ["%s %s" % (pad, dump(e, indent + 1)) for e in v]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(v, ensure_ascii=False)


def write_op_groups(outdir, wanted=lambda group: True):
    """Writes OUTDIR/<GROUP>.json for every tools/oracle/ops_*.py module, whose
    generate() returns the group's cases (op helpers each own one module), if
    wanted(GROUP)."""
    here = os.path.dirname(os.path.abspath(__file__))
    total = 0
    for fn in sorted(os.listdir(here)):
        if not (fn.startswith("ops_") and fn.endswith(".py")):
            continue
        mod = importlib.import_module(fn[:-3])
        if not wanted(mod.GROUP):
            continue
        out = mod.generate()
        doc = {"group": mod.GROUP, "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
               "numpy_version": np.__version__, "generator": "tools/oracle/" + fn, "cases": out}
        with open(os.path.join(outdir, mod.GROUP + ".json"), "w", encoding="utf-8") as fh:
            fh.write(dump(doc) + "\n")
        total += len(out)
        print("oracle: %-14s %4d cases" % (mod.GROUP, len(out)))
    return total


def main(argv):
    if len(argv) < 2:
        print("usage: generate.py OUTDIR [GROUP...]", file=sys.stderr)
        return 2
    outdir = argv[1]
    only = set(argv[2:])

    def wanted(group):
        return not only or group in only
    if jax.device_count() != 8 or jax.default_backend() != "cpu":
        print("oracle: need 8 CPU devices (JAX_PLATFORMS=cpu "
              "XLA_FLAGS=--xla_force_host_platform_device_count=8)", file=sys.stderr)
        return 2
    import flax
    os.makedirs(outdir, exist_ok=True)
    names = set()
    total = 0
    for group, corpus in cases.GROUPS.items():
        if not wanted(group):
            continue
        out = []
        for case in corpus:
            if case["name"] in names:
                raise CaseError("duplicate case name %s/%s" % (group, case["name"]))
            names.add(case["name"])
            out.append(record(case, GENERATORS[group](case)))
        names.clear()
        doc = {"group": group, "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
               "flax_version": flax.__version__, "numpy_version": np.__version__,
               "generator": "tools/oracle/generate.py", "cases": out}
        with open(os.path.join(outdir, group + ".json"), "w", encoding="utf-8") as fh:
            fh.write(dump(doc) + "\n")
        total += len(out)
        print("oracle: %-14s %4d cases" % (group, len(out)))
    total += write_op_groups(outdir, wanted)
    progs = []
    if wanted("programs"):
        progs = programs.generate()
        doc = {"group": "programs", "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
               "numpy_version": np.__version__, "generator": "tools/oracle/programs.py", "programs": progs}
        with open(os.path.join(outdir, "programs.json"), "w", encoding="utf-8") as fh:
            fh.write(dump(doc) + "\n")
        print("oracle: %-14s %4d programs" % ("programs", len(progs)))
    if wanted("programs_types"):
        tprogs = programs.generate(programs_types.TYPE_PROGRAMS)
        doc = {"group": "programs_types", "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
               "numpy_version": np.__version__, "ml_dtypes_version": ml_dtypes.__version__,
               "generator": "tools/oracle/programs_types.py", "programs": tprogs}
        with open(os.path.join(outdir, "programs_types.json"), "w", encoding="utf-8") as fh:
            fh.write(dump(doc) + "\n")
        print("oracle: %-14s %4d programs" % ("programs_types", len(tprogs)))
        progs = progs + tprogs
    if wanted("programs_poly"):
        pprogs = programs_poly.generate()
        doc = {"group": "programs_poly", "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
               "numpy_version": np.__version__, "generator": "tools/oracle/programs_poly.py", "programs": pprogs}
        with open(os.path.join(outdir, "programs_poly.json"), "w", encoding="utf-8") as fh:
            fh.write(dump(doc) + "\n")
        print("oracle: %-14s %4d programs" % ("programs_poly", len(pprogs)))
    if wanted("pretty_forms"):
        mods = pretty_forms.generate()
        doc = {"group": "pretty_forms", "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
               "numpy_version": np.__version__, "generator": "tools/oracle/pretty_forms.py", "modules": mods}
        with open(os.path.join(outdir, "pretty_forms.json"), "w", encoding="utf-8") as fh:
            fh.write(dump(doc) + "\n")
        print("oracle: %-14s %4d modules" % ("pretty_forms", len(mods)))
    if wanted("vjp"):
        grads = vjp.generate()
        doc = {"group": "vjp", "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
               "numpy_version": np.__version__, "generator": "tools/oracle/vjp.py", **grads}
        with open(os.path.join(outdir, "vjp.json"), "w", encoding="utf-8") as fh:
            fh.write(dump(doc) + "\n")
        print("oracle: %-14s %4d rules, %d programs" % ("vjp", len(grads["rules"]), len(grads["programs"])))
    if wanted("optim"):
        opt = optim.generate()
        doc = {"group": "optim", "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
               "numpy_version": np.__version__, "generator": "tools/oracle/optim.py", **opt}
        with open(os.path.join(outdir, "optim.json"), "w", encoding="utf-8") as fh:
            fh.write(dump(doc) + "\n")
        print("oracle: %-14s %4d optimizers, %d schedules" % ("optim", len(opt["optimizers"]), len(opt["schedules"])))
    if wanted("gpt"):
        run = gpt.generate()
        doc = {"group": "gpt", "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
               "numpy_version": np.__version__, "optax_version": gpt.optax.__version__,
               "generator": "tools/oracle/gpt.py", **run}
        with open(os.path.join(outdir, "gpt.json"), "w", encoding="utf-8") as fh:
            fh.write(dump(doc) + "\n")
        print("oracle: %-14s %4d steps, loss %.4f -> %.4f" % ("gpt", run["steps"], run["losses"][0], run["losses"][-1]))
    if wanted("checkpoint"):
        ck = checkpoint.generate()
        doc = {"group": "checkpoint", "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
               "numpy_version": np.__version__, "tensorstore_version": importlib.metadata.version("tensorstore"),
               "generator": "tools/oracle/checkpoint.py", **ck}
        with open(os.path.join(outdir, "checkpoint.json"), "w", encoding="utf-8") as fh:
            fh.write(dump(doc) + "\n")
        print("oracle: %-14s %4d written, %d read" % ("checkpoint", len(ck["written"]), len(ck["read"])))
    if wanted("memory_kinds"):
        mk = memory_kinds.generate()
        doc = {"group": "memory_kinds", "jax_version": jax.__version__, "jaxlib_version": jaxlib.__version__,
               "numpy_version": np.__version__, "generator": "tools/oracle/memory_kinds.py", **mk}
        with open(os.path.join(outdir, "memory_kinds.json"), "w", encoding="utf-8") as fh:
            fh.write(dump(doc) + "\n")
        print("oracle: %-14s %4d reprs, %d programs, %d placed" % (
            "memory_kinds", len(mk["reprs"]), len(mk["programs"]), len(mk["placed"])))
    print("oracle: %d cases, %d programs, jax %s" % (total, len(progs), jax.__version__))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (CaseError, programs.ProgramError, vjp.VJPError, optim.OptimError,
            checkpoint.CheckpointError, memory_kinds.MemoryKindsError) as e:
        print("oracle: " + str(e), file=sys.stderr)
        sys.exit(1)
