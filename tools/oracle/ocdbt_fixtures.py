"""OCDBT databases written by tensorstore and Orbax, as fixtures for package checkpoint/ocdbt.

Each fixture is a database that tensorstore (or Orbax, through tensorstore) writes on the
local filesystem; the script stores it as OUTDIR/<name>.json:

    {"files": {relpath: base64 bytes}, "entries": {key: base64 value}}

"files" is every file of the database directory; "entries" is what tensorstore itself lists
and reads back from it (the latest version). Keys and values come from simple formulas, but
tensorstore names data files at random and stamps each version with the time, so the files
differ on every run: the fixtures are frozen (testdata/ocdbt/frozen.sha256), not regenerated
by CI.

Usage: .cache/oracle-venv/bin/python tools/oracle/ocdbt_fixtures.py OUTDIR [NAME...]

With names, only those fixtures are made (the others stay as they are).
"""

import base64
import json
import os
import sys
import tempfile

import tensorstore as ts


def value(i, n):
    """n bytes that depend on i."""
    return bytes((i * 7 + j * 13) % 256 for j in range(n))


def open_kv(path, config=None):
    spec = {"driver": "ocdbt", "base": "file://" + path + "/"}
    if config is not None:
        spec["config"] = config
    return ts.KvStore.open(spec).result()


def commit(kv, writes):
    """Writes (key, value or None to delete) as one transaction: one new version."""
    txn = ts.Transaction(atomic=True)
    t = kv.with_transaction(txn)
    for k, v in writes:
        if v is None:
            t.delete_range(ts.KvStore.KeyRange(k, k + b"\0"))
        else:
            t.write(k, v).result()
    txn.commit_sync()


def dump(path, name, outdir):
    kv = open_kv(path)
    entries = {}
    for k in kv.list().result():
        r = kv.read(k).result()
        assert r.state == "value", (name, k, r.state)
        entries[k.decode("ascii")] = base64.b64encode(r.value).decode("ascii")
    files = {}
    for root, _, names in os.walk(path):
        for n in names:
            full = os.path.join(root, n)
            rel = os.path.relpath(full, path)
            with open(full, "rb") as f:
                files[rel] = base64.b64encode(f.read()).decode("ascii")
    out = {"files": dict(sorted(files.items())), "entries": dict(sorted(entries.items()))}
    with open(os.path.join(outdir, name + ".json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(name, len(files), "files", len(entries), "entries")


def single(path):
    """Default config (zstd, 100-byte inline limit), one version: inline and indirect values."""
    kv = open_kv(path)
    commit(kv, [(b"key/%03d" % i, value(i, i * 9)) for i in range(30)] + [(b"z", b"")])


def uncompressed(path):
    """compression null: nodes and manifest are stored uncompressed."""
    kv = open_kv(path, {"compression": None, "max_inline_value_bytes": 40})
    commit(kv, [(b"u%02d" % i, value(i, i * 5)) for i in range(20)])


def multilevel(path):
    """2000 keys, 1 KiB nodes: a B+tree with interior nodes over several levels."""
    kv = open_kv(path, {"max_decoded_node_bytes": 1024})
    commit(kv, [(b"tree/key%05d" % (i * 7), b"v%d" % (i * i)) for i in range(2000)])


def versions(path):
    """12 versions, version tree arity 2: version tree nodes outside the manifest, overwritten
    and deleted keys (the latest version wins)."""
    kv = open_kv(path, {"version_tree_arity_log2": 1})
    for c in range(12):
        writes = [(b"v/%02d" % c, value(c, 10 + c * 20))]
        writes.append((b"shared", b"version %d" % c))
        if c >= 2:
            writes.append((b"v/%02d" % (c - 2), None))
        if c % 3 == 0:
            writes.append((b"big%d" % c, value(c, 300)))
        commit(kv, writes)


def numbered(path):
    """manifest_kind numbered: the version tree lives in manifest.<16 hex digits> files."""
    kv = open_kv(path, {"manifest_kind": "numbered"})
    for c in range(3):
        commit(kv, [(b"n/%d" % c, value(c, 50 + c * 60)), (b"n/last", b"%d" % c)])


def orbax(path):
    """Orbax's default save of a dict of three small arrays (zarr v2 arrays in OCDBT)."""
    import jax.numpy as jnp
    import numpy as np
    import orbax.checkpoint as ocp

    # "a" is large enough (its zstd chunk above Orbax's 1024-byte inline limit) that the
    # top-level B+tree refers to the value in ocdbt.process_0/d/...; "b" and "c" are inline.
    tree = {
        "a": jnp.asarray(np.sin(np.arange(32 * 32, dtype=np.float32)).reshape(32, 32)),
        "b": jnp.arange(5, dtype=jnp.int32),
        "c": jnp.asarray(np.full((2, 2), 1.5, dtype=np.float32)),
    }
    os.rmdir(path)
    ckptr = ocp.StandardCheckpointer()
    ckptr.save(path, tree)
    ckptr.wait_until_finished()


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    names = set(sys.argv[2:])
    for make in (single, uncompressed, multilevel, versions, numbered, orbax):
        if names and make.__name__ not in names:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "db")
            os.mkdir(path)
            make(path)
            dump(path, make.__name__, outdir)


if __name__ == "__main__":
    main()
