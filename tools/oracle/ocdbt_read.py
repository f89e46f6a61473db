"""Has tensorstore read an OCDBT database that package checkpoint/ocdbt wrote.

Opens DIR with tensorstore's ocdbt driver on the local filesystem, lists its keys and reads
every value. With ENTRIES.json ({key: base64 value}, keys as latin-1 code points, as
checkpoint/ocdbt's TestWriteForTensorstore writes it), checks that tensorstore lists
exactly those keys and reads exactly those values; exits 1 on any difference.

Usage: .cache/oracle-venv/bin/python tools/oracle/ocdbt_read.py DIR [ENTRIES.json]
"""

import base64
import hashlib
import json
import sys

import tensorstore as ts


def main():
    path = sys.argv[1]
    kv = ts.KvStore.open({"driver": "ocdbt", "base": "file://" + path.rstrip("/") + "/"}).result()
    keys = kv.list().result()
    got = {}
    for k in keys:
        r = kv.read(k).result()
        if r.state != "value":
            print("FAIL", repr(k), "listed but reads as", r.state)
            sys.exit(1)
        got[k] = r.value
    digest = hashlib.sha256()
    for k in sorted(got):
        digest.update(len(k).to_bytes(8, "little") + k + len(got[k]).to_bytes(8, "little") + got[k])
    sizes = sorted(len(v) for v in got.values())
    print(f"{path}: tensorstore read {len(got)} keys, {sum(sizes)} value bytes"
          f" (sizes {sizes[0] if sizes else '-'}..{sizes[-1] if sizes else '-'}), sha256 {digest.hexdigest()[:16]}")
    if len(sys.argv) > 2:
        with open(sys.argv[2]) as f:
            want = {k.encode("latin-1"): base64.b64decode(v) for k, v in json.load(f).items()}
        bad = 0
        for k in sorted(set(want) | set(got)):
            if k not in got:
                print("FAIL missing key", repr(k))
                bad += 1
            elif k not in want:
                print("FAIL extra key", repr(k))
                bad += 1
            elif got[k] != want[k]:
                print("FAIL value of", repr(k), len(got[k]), "bytes, want", len(want[k]))
                bad += 1
        if bad:
            sys.exit(1)
        print(f"OK: all {len(want)} keys and values match")


if __name__ == "__main__":
    main()
