#!/usr/bin/env bash
# Mutation testing with gremlins (tools/setup/gremlins.sh installs the pinned version): plants
# small bugs (a flipped comparison, a changed boundary, an arithmetic swap) one at a time in a
# package's covered code, runs that package's tests on each, and prints per package the efficacy
# (killed / covered mutants) and every mutant that survived (tools/mutationreport).
#
#   tools/mutation.sh ./pjrt/... ./mesh            # every covered mutant of these packages
#   tools/mutation.sh -diff REF                    # only lines changed since REF, in the packages
#                                                  # those changes touch (or the ones named)
#   tools/mutation.sh -sample 40 ./jit ./pjrt      # the mutants of 40 lines of each package,
#                                                  # drawn at random (MUTATION_SEED, default 1)
#
# -sample is for packages whose full run would take hours on a small machine. A dry run lists
# each package's covered mutants; tools/mutationreport -sample draws N of the lines that carry
# them; the tests then run on every mutant of those lines, in a temporary worktree of HEAD
# (commit first: uncommitted changes are not in the sample). gremlins can only restrict itself
# to the lines of a git diff, so the draw is handed to it as one: a commit whose only difference
# from HEAD is a comment on each drawn line is the base, and HEAD's tree on top of it is what
# gremlins diffs against that base (neither commit is on any branch).
#
# MUTATION_SAMPLE_LINES=FILE reruns an earlier draw (the out directory's sample.tsv) instead
# of drawing anew.
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
sample=""
case ${1:-} in
-diff)
  [[ $# -ge 2 ]] || die "-diff needs a git ref"
  diff=$2
  shift 2
  git rev-parse --verify -q "$diff^{commit}" >/dev/null || die "-diff $diff: not a commit"
  ;;
-sample)
  [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || die "-sample needs a number of lines"
  sample=$2
  shift 2
  [[ $# -gt 0 ]] || die "-sample: name the packages, e.g. tools/mutation.sh -sample 40 ./pjrt"
  ;;
esac
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
# The tests find the plugins in this checkout's cache wherever gremlins copies the module.
export XLAMESH_CACHE_DIR=${XLAMESH_CACHE_DIR:-$repo/.cache}
# Packages with tests: import path, directory, and the path from the repository's root.
targets=()
while read -r ip dir; do
  rel=${ip#"$module"}
  rel=${rel#/}
  [[ -n $rel ]] || rel=.
  targets+=("$rel")
done < <(go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}} {{.Dir}}{{end}}' "${pkgs[@]}")
[[ ${#targets[@]} -gt 0 ]] || die "no package with tests in ${pkgs[*]}"

# gremlins over the package at $1 (a directory) with the arguments that follow; the report is
# the -o file they name. It runs from the package's directory and names files relative to it,
# but matches them against `git diff --merge-base REF`, whose names are relative to the
# repository's root: nothing would ever match. diff.relative makes git name them as gremlins
# does. diff.context=0: gremlins takes each hunk's added lines as one run starting after the
# hunk's leading context, so with context two changes a few lines apart are one hunk, and the
# second change (and the lines after the first) would be misread; without context each hunk is
# one run of changed lines. gremlins' own exit status says nothing the report does not; a missing report is the
# failure. GOFLAGS=-skip=GPUOnly: gremlins runs plain `go test`, and the tests named *GPUOnly*
# fail on CPU by design (make unit passes -skip GPUOnly the same way). -count=1: gremlins
# times each mutant's tests against its first (coverage) run, and a result go test took from
# its cache takes no time, which would time every mutant out. -E /: only the package's
# own files (gremlins walks subdirectories too, whose tests it does not run).
gremlins_in() {
  local dir=$1
  shift
  (cd "$dir" && GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=diff.relative GIT_CONFIG_VALUE_0=true \
    GIT_CONFIG_KEY_1=diff.context GIT_CONFIG_VALUE_1=0 \
    GOFLAGS="${GOFLAGS:+$GOFLAGS }-skip=GPUOnly -count=1" "$gremlins" unleash -E / "$@" "$dir") || true
}
name_of() { local n=${1//\//_}; echo "${n}"; }

root=$repo
if [[ -n $sample ]]; then
  seed=${MUTATION_SEED:-1}
  # A worktree of HEAD: gremlins copies the whole module for each run, and the checkout's
  # .cache (plugins, JAX's venv) is gigabytes a worktree does not have.
  tmp=$(mktemp -d)
  trap 'git -C "$repo" worktree remove --force "$tmp/tree" 2>/dev/null; rm -rf "$tmp"' EXIT
  git worktree add -q --detach "$tmp/tree" HEAD
  root=$tmp/tree
  dry=()
  for rel in "${targets[@]}"; do
    json="$out/$(name_of "$rel").dryrun.json"
    dry+=("$rel=$json")
    [[ -z ${MUTATION_SAMPLE_LINES:-} ]] || continue
    rm -f "$json"
    echo "== mutation: $rel (dry run: which mutants the tests cover)"
    gremlins_in "$root/$rel" --dry-run --workers 1 -o "$json" >/dev/null
    [[ -s $json ]] || die "gremlins wrote no dry-run report for $rel"
  done
  drawn="$out/sample.tsv"
  if [[ -n ${MUTATION_SAMPLE_LINES:-} ]]; then
    # An earlier draw, run again (after new tests, which may cover more lines and so would
    # change a fresh draw).
    [[ -s $MUTATION_SAMPLE_LINES ]] || die "MUTATION_SAMPLE_LINES=$MUTATION_SAMPLE_LINES: no such draw"
    [[ $MUTATION_SAMPLE_LINES -ef $drawn ]] || cp "$MUTATION_SAMPLE_LINES" "$drawn"
  else
    go run ./tools/mutationreport -sample "$sample" -seed "$seed" "${dry[@]}" >"$drawn"
  fi
  # The base: HEAD with a comment on each drawn line, written through a temporary index.
  export GIT_INDEX_FILE=$tmp/index
  git read-tree HEAD
  while read -r file; do
    blob=$(git show "HEAD:$file" |
      awk -v f="$file" 'NR == FNR { if ($1 == f) want[$2] = 1; next } { print (FNR in want) ? $0 " // mutation sample" : $0 }' "$drawn" - |
      git hash-object -w --stdin)
    git update-index --cacheinfo "100644,$blob,$file"
  done < <(cut -f1 "$drawn" | sort -u)
  base=$(git commit-tree -m "mutation sample base (seed $seed)" "$(git write-tree)")
  unset GIT_INDEX_FILE
  # HEAD's tree over the base: the worktree's files stay as they are.
  top=$(git commit-tree -p "$base" -m "HEAD over the mutation sample base" "HEAD^{tree}")
  git -C "$root" checkout -q --detach "$top"
  diff=$base
fi

reports=()
for rel in "${targets[@]}"; do
  json="$out/$(name_of "$rel").json"
  rm -f "$json"
  args=(--workers "${MUTATION_WORKERS:-1}" --test-cpu "${MUTATION_WORKERS:-1}"
    --timeout-coefficient "${MUTATION_TIMEOUT_COEFFICIENT:-10}" -S l -o "$json")
  [[ -z $diff ]] || args+=(--diff "$diff")
  if [[ -n $sample ]]; then
    echo "== mutation: $rel (the sample's lines)"
  else
    echo "== mutation: $rel${diff:+ (lines changed since $diff)}"
  fi
  gremlins_in "$root/$rel" "${args[@]}"
  [[ -s $json ]] || die "gremlins wrote no report for $rel"
  reports+=("$rel=$json")
done
if [[ -n $sample ]]; then
  if [[ -n ${MUTATION_SAMPLE_LINES:-} ]]; then
    echo "== mutation summary (the draw in $MUTATION_SAMPLE_LINES)"
  else
    echo "== mutation summary (a sample: $sample lines of each package, seed $seed)"
    go run ./tools/mutationreport -sample "$sample" -seed "$seed" "${dry[@]}" 2>&1 >/dev/null
  fi
else
  echo "== mutation summary${diff:+ (lines changed since $diff)}"
fi
go run ./tools/mutationreport -min "${MUTATION_MIN:-0}" "${reports[@]}"
