#!/usr/bin/env bash
# CI guard for the oracle's goldens: regenerates them from JAX into a temp dir
# and fails if they differ from the checked-in testdata/oracle/ (goldens are
# never hand-edited; fix the corpus or the generator and run `make oracle`). Float32 arrays may
# differ by rounding within 1e-6 of their largest magnitude (compare.py), nothing else.
# The Go comparison tests (internal/oracletest) run in `make unit` either way.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$here/generate.sh" "$tmp/oracle" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; echo "xlamesh: oracle-check: generator failed" >&2; exit 1; }
# Files that differ must still be equal as JSON, float32 arrays to 1e-6 of their largest
# magnitude (compare.py): JAX's own float32 rounding follows the processor it ran on.
bad=0
# The frozen goldens (*081.json, written by the JAX 0.8.1 oracle before it moved to 0.12)
# are not regenerated; their bytes must be those listed in frozen.sha256.
(cd "$repo/testdata/oracle" && sha256sum --quiet -c "$here/frozen.sha256") \
  || { echo "xlamesh: oracle-check: a frozen JAX 0.8.1 golden changed (tools/oracle/frozen.sha256)" >&2; exit 1; }
for f in "$repo"/testdata/oracle/* "$tmp"/oracle/*; do
  name=$(basename "$f")
  [[ $name == *081.json ]] && continue
  [[ -e $tmp/oracle/$name && -e $repo/testdata/oracle/$name ]] || { echo "xlamesh: oracle-check: $name is in only one of the two sets" >&2; bad=1; continue; }
  [[ $f == "$repo"/* ]] || continue
  cmp -s "$f" "$tmp/oracle/$name" && continue
  if [[ $name == *.json ]] && python3 "$here/compare.py" "$f" "$tmp/oracle/$name"; then continue; fi
  bad=1
done
if ((bad)); then
  diff -ru "$repo/testdata/oracle" "$tmp/oracle" >"$tmp/diff" || true
  head -n 200 "$tmp/diff" >&2
  echo "xlamesh: oracle-check: goldens in testdata/oracle differ from what JAX says now (diff above: --- checked in, +++ regenerated)." >&2
  echo "xlamesh: oracle-check: if the change is intended, run 'make oracle' and commit testdata/oracle." >&2
  exit 1
fi
echo "xlamesh: oracle-check: $(grep -h '^oracle: [0-9]* cases' "$tmp/log") match testdata/oracle"
