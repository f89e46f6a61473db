#!/usr/bin/env bash
# Runs every Go fuzz target of the repository for a fixed time (default 30s each).
# A crash fails the run; Go writes the failing input under the package's testdata/fuzz/.
#
#   tools/fuzz-smoke.sh [FUZZTIME]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime=${1:-30s}
# The repository's own test files, tracked or not, outside ignored paths (.cache/) and the
# directories go's ./... skips (names starting with '_' or '.').
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*_test.go' | grep -Ev '(^|/)[_.]')
mapfile -t targets < <(grep -ho '^func Fuzz[A-Za-z0-9_]*' "${files[@]}" | sort -u | sed 's/^func //')
[[ ${#targets[@]} -gt 0 ]] || { echo "fuzz-smoke: no fuzz targets found" >&2; exit 1; }
for target in "${targets[@]}"; do
  pkg=./$(grep -l "^func $target(" "${files[@]}" | head -n1 | xargs dirname)
  echo "fuzz-smoke: $target in $pkg for $fuzztime"
  go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" > /tmp/xlamesh-fuzz.$$ 2>&1 || {
    cat /tmp/xlamesh-fuzz.$$; rm -f /tmp/xlamesh-fuzz.$$; echo "fuzz-smoke: $target FAILED" >&2; exit 1; }
  tail -n 1 /tmp/xlamesh-fuzz.$$
done
rm -f /tmp/xlamesh-fuzz.$$
echo "fuzz-smoke: ${#targets[@]} targets ran $fuzztime each without a crash"
