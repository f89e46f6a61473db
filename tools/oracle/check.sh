#!/usr/bin/env bash
# CI guard for the oracle's goldens: regenerates them from JAX into a temp dir
# and fails if they differ from the checked-in testdata/oracle/ (goldens are
# never hand-edited; fix the corpus or the generator and run `make oracle`).
# The Go comparison tests (internal/oracletest) run in `make unit` either way.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$here/generate.sh" "$tmp/oracle" >"$tmp/log" 2>&1 || { cat "$tmp/log" >&2; echo "xlamesh: oracle-check: generator failed" >&2; exit 1; }
if ! diff -ru "$repo/testdata/oracle" "$tmp/oracle" >"$tmp/diff"; then
  head -n 200 "$tmp/diff" >&2
  echo "xlamesh: oracle-check: goldens in testdata/oracle differ from what JAX says now (diff above: --- checked in, +++ regenerated)." >&2
  echo "xlamesh: oracle-check: if the change is intended, run 'make oracle' and commit testdata/oracle." >&2
  exit 1
fi
echo "xlamesh: oracle-check: $(grep -h '^oracle: [0-9]* cases' "$tmp/log") match testdata/oracle"
