#!/usr/bin/env bash
# Mutation testing with gremlins (tools/setup/gremlins.sh installs the pinned version): plants
# small bugs (a flipped comparison, a changed boundary, an arithmetic swap) one at a time in a
# package's covered code, runs that package's tests on each, and prints per package the efficacy
# (killed / covered mutants) and every mutant that survived (tools/mutationreport).
#
#   tools/mutation.sh ./pjrt/... ./mesh            # every covered mutant of these packages
#   tools/mutation.sh -diff REF                    # only lines changed since REF, in the packages
#                                                  # those changes touch (or the ones named)
#
# Environment: MUTATION_WORKERS (default 1), MUTATION_TIMEOUT_COEFFICIENT (default 10: a test
# run may take that many times its unmutated time), MUTATION_MIN (exit 1 under this efficacy,
# default 0), MUTATION_OUT (the JSON reports, default <repo>/.cache/mutation), GREMLINS (a
# gremlins binary to use instead of the pinned one). Slow: not part of make test.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
cd "$repo"
die() { echo "xlamesh: mutation: $*" >&2; exit 2; }

diff=""
if [[ ${1:-} == -diff ]]; then
  [[ $# -ge 2 ]] || die "-diff needs a git ref"
  diff=$2
  shift 2
  git rev-parse --verify -q "$diff^{commit}" >/dev/null || die "-diff $diff: not a commit"
fi
pkgs=("$@")
if [[ ${#pkgs[@]} -eq 0 ]]; then
  [[ -n $diff ]] || die "name the packages, e.g. tools/mutation.sh ./pjrt/..."
  # The directories of the non-test Go files changed since the ref.
  mapfile -t pkgs < <(git diff --name-only "$diff" -- '*.go' | grep -v '_test\.go$' | xargs -r -n1 dirname | sort -u | sed 's|^|./|')
  if [[ ${#pkgs[@]} -eq 0 ]]; then
    echo "mutation: no non-test Go file changed since $diff"
    exit 0
  fi
fi

gremlins=${GREMLINS:-$(bash tools/setup/gremlins.sh)}
out=${MUTATION_OUT:-$repo/.cache/mutation}
mkdir -p "$out"
module=$(go list -m)
reports=()
# Packages with tests, as import path and directory.
while read -r ip dir; do
  rel=${ip#"$module"}
  rel=${rel#/}
  [[ -n $rel ]] || rel=.
  name=${rel//\//_}
  json="$out/$name.json"
  rm -f "$json"
  # -E /: only the package's own files (gremlins walks subdirectories too, whose tests it
  # does not run).
  args=(unleash --workers "${MUTATION_WORKERS:-1}" --test-cpu "${MUTATION_WORKERS:-1}"
    --timeout-coefficient "${MUTATION_TIMEOUT_COEFFICIENT:-10}" -E / -S l -o "$json")
  [[ -z $diff ]] || args+=(--diff "$diff")
  echo "== mutation: $rel${diff:+ (lines changed since $diff)}"
  # gremlins runs from the package's directory and names files relative to it, but matches
  # them against `git diff --merge-base REF`, whose names are relative to the repository's
  # root: nothing would ever match. diff.relative makes git name them as gremlins does.
  # gremlins' own exit status says nothing the report does not; a missing report is the failure.
  # GOFLAGS=-skip=GPUOnly: gremlins runs plain `go test`, and the tests named *GPUOnly* fail on
  # CPU by design (make unit passes -skip GPUOnly the same way).
  (cd "$dir" && GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=diff.relative GIT_CONFIG_VALUE_0=true \
    GOFLAGS="${GOFLAGS:+$GOFLAGS }-skip=GPUOnly" "$gremlins" "${args[@]}" "$dir") || true
  [[ -s $json ]] || die "gremlins wrote no report for $rel"
  reports+=("$rel=$json")
done < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "${pkgs[@]}")
[[ ${#reports[@]} -gt 0 ]] || die "no package with tests in ${pkgs[*]}"
echo "== mutation summary${diff:+ (lines changed since $diff)}"
go run ./tools/mutationreport -min "${MUTATION_MIN:-0}" "${reports[@]}"
