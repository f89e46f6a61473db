#!/usr/bin/env bash
# Runs every Go fuzz target of the repository for a fixed time (default 30s each).
# A crash fails the run; Go writes the failing input under the package's testdata/fuzz/.
#
#   tools/fuzz-smoke.sh [FUZZTIME]
#
# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline exceeded" at the
# -fuzztime boundary when a worker is mid-call as the deadline fires (go.dev/issue/75804, fixed
# in Go 1.27). That failure writes no input and names no error of ours. A target that ends so is
# run once more, and said so; a second such end, or any other failure, fails the run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fuzztime=${1:-30s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The repository's own test files, tracked or not, outside ignored paths (.cache/) and the
# directories go's ./... skips (names starting with '_' or '.').
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- '*_test.go' | grep -Ev '(^|/)[_.]')
mapfile -t targets < <(grep -ho '^func Fuzz[A-Za-z0-9_]*' "${files[@]}" | sort -u | sed 's/^func //')
[[ ${#targets[@]} -gt 0 ]] || { echo "fuzz-smoke: no fuzz targets found" >&2; exit 1; }

# boundary_race LOG: whether LOG is Go's fuzztime-boundary failure and nothing else: the only
# failure line is the bare deadline, and no input was written.
boundary_race() {
  grep -q '^    context deadline exceeded$' "$1" &&
    ! grep -Eq 'Failing input written|panic:|_test\.go:[0-9]+:|fuzz: minimizing' "$1"
}

retried=0
for target in "${targets[@]}"; do
  pkg=./$(grep -l "^func $target(" "${files[@]}" | head -n1 | xargs dirname)
  for try in 1 2; do
    echo "fuzz-smoke: $target in $pkg for $fuzztime"
    if go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" >"$log" 2>&1; then
      tail -n 1 "$log"
      break
    fi
    if [[ $try == 1 ]] && boundary_race "$log"; then
      echo "fuzz-smoke: $target ended on Go's fuzztime-boundary race (go.dev/issue/75804), no input written; once more" >&2
      retried=$((retried + 1))
      continue
    fi
    cat "$log"
    echo "fuzz-smoke: $target FAILED" >&2
    exit 1
  done
done
echo "fuzz-smoke: ${#targets[@]} targets ran $fuzztime each without a crash ($retried rerun after the boundary race)"
