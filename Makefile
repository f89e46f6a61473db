# xlamesh: the two commands the README promises, and the steps behind them.
#
#   make demo      # installs the pinned CPU plugin if needed, runs the seed program on 8 CPU devices
#   make test      # installs the plugins and the oracle's JAX venv if needed, then runs every check
#   make test-gpu  # the integration suites on the CUDA plugin, on a machine with an NVIDIA GPU
#   make gpu-bundle        # .cache/gpu-bundle.tar.xz: those suites for a GPU host without Go (docs/gpu.md)
#   make gpu-bundle-check  # the bundle run in its CPU mode here, with go off PATH (make test runs a reduced set)
#
# Everything downloaded goes to .cache/ (ignored by git); set XLAMESH_CACHE_DIR to move it.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export XLAMESH_CACHE_DIR ?= $(CURDIR)/.cache
GO ?= go
FUZZTIME ?= 12s

.PHONY: demo test test-gpu gpu-bundle gpu-bundle-check gpu-bundle-ci setup generate newcomer oracle-env lint unit fuzz-smoke oracle-check oracle bench mutation mutation-diff

demo: generate
	@$(INSTALL) -check -plugin cpu >/dev/null
	$(GO) run ./cmd/xlamesh-demo

# The test run comes last so that its "N passed, N failed, N skipped" line closes the output.
test: generate setup oracle-env lint fuzz-smoke oracle-check newcomer gpu-bundle-ci unit

# The pinned PJRT plugins (pjrt/plugins.Known): the default CPU plugin of pjrt.Open() (PJRT API
# 0.115), a second CPU plugin of the oldest API xlamesh speaks (0.81), and the CUDA plugin
# (test-gpu; pjrt's tests load it everywhere); and the LAPACK library (pjrt/plugins.LAPACK) over
# which CPU clients serve the lapack_*_ffi kernels of jnp.linalg programs. Then a test fixture:
# Debian's ILP64 OpenBLAS (tools/setup/ilp64-lapack.sh), which pjrt must refuse.
# The installer is the one users run: `xlamesh install-plugin`, pure Go, no Python.
PLUGINS := cpu,cpu-0.81,cuda12,lapack
INSTALL := $(GO) run ./cmd/xlamesh install-plugin
# The packages whose tests open a PJRT client; they run once more per extra plugin.
INTEGRATION := ./pjrt/... ./jit ./lower ./examples ./examples/mlp ./autodiff/... ./internal/oracletest

setup:
	@$(INSTALL) -check -plugin $(PLUGINS) >/dev/null
	@bash tools/setup/ilp64-lapack.sh >/dev/null

# pjrt/cc_sources.go fingerprints the C files of cc/ that cgo compiles into pjrt: the go command's
# cache sees only pjrt's own files, so without this an edit under cc/ could link a stale C object.
# Commit the file when it changes (pjrt's tests and Bazel's fail on a stale one).
generate:
	@$(GO) generate ./pjrt

oracle-env:
	@bash tools/setup/oracle-env.sh

# gofmt, go vet, then staticcheck (honnef.co/go/tools, pinned and installed into the cache by
# tools/setup/staticcheck.sh) over every package.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [[ -n "$$out" ]]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@staticcheck=$$(bash tools/setup/staticcheck.sh); echo "staticcheck ./..."; "$$staticcheck" ./...

# Every test with the race detector on the default plugin, then the integration packages (and
# mlir/bytecode's JAX corpora, lower/wrap's modules written elsewhere) on the second CPU plugin.
# tools/testreport prints per pass and package the counts and the PJRT client opened, and fails
# on any failure or skip; its last line counts both passes. Tests named
# *GPUOnly* are for XLAMESH_TEST_PLATFORM=gpu only and are not run on CPU (-skip GPUOnly).
unit: generate
	@second=$$($(INSTALL) -path -plugin cpu-0.81); \
	( r=0; \
	  echo "testreport-pass: 1/2 default plugin, all packages"; \
	  env -u XLAMESH_PJRT_PLUGIN -u XLAMESH_TEST_PLATFORM $(GO) test -race -count=1 -json -skip GPUOnly ./... || r=1; \
	  echo "testreport-pass: 2/2 xla-cpu-pjrt, integration packages"; \
	  env -u XLAMESH_TEST_PLATFORM XLAMESH_PJRT_PLUGIN="$$second" $(GO) test -race -count=1 -json -skip GPUOnly $(INTEGRATION) ./optim ./examples/gpt ./checkpoint ./mlir/bytecode ./lower/wrap || r=1; \
	  exit $$r ) | $(GO) run ./tools/testreport

# The integration packages on the CUDA plugin; fails when nvidia-smi shows no GPU.
test-gpu: generate
	@nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || { \
	  echo "make test-gpu: no GPU found (nvidia-smi is missing or lists no GPU); run it on a machine with an NVIDIA GPU and its driver" >&2; exit 1; }
	@$(MAKE) --no-print-directory setup
	@cuda=$$($(INSTALL) -path -plugin cuda12); \
	( echo "testreport-pass: jax-cuda12-pjrt with XLAMESH_TEST_PLATFORM=gpu, integration packages"; \
	  XLAMESH_PJRT_PLUGIN="$$cuda" XLAMESH_TEST_PLATFORM=gpu $(GO) test -race -count=1 -json $(INTEGRATION) ) | $(GO) run ./tools/testreport

# The GPU lane (docs/gpu.md): one archive with the integration packages' stripped test binaries
# (and the files they read), the xlamesh CLI (its bench is the benchmark) and run.sh, for a GPU
# host without Go or network; the build fails when it is over 40 MiB.
gpu-bundle: generate
	@bash tools/gpu-bundle/build.sh $(INTEGRATION)

# make test checks the bundle's files, not its compression: xz's parallel default is sooner.
gpu-bundle-ci: export XLAMESH_GPU_BUNDLE_XZ = -6 -T0

# The bundle unpacked into an empty directory and run in its CPU mode on the API 0.81 CPU plugin
# (the one it was first proven with), with go off PATH: every suite. gpu-bundle-ci is the same with the reduced -test.run set of
# tools/gpu-bundle/ci-tests, which make test runs so that the bundle never rots (docs/gpu.md says
# why a reduced set and what it costs).
gpu-bundle-check: gpu-bundle
	@bash tools/gpu-bundle/check.sh "$$($(INSTALL) -path -plugin cpu-0.81)"

gpu-bundle-ci: gpu-bundle
	@XLAMESH_BUNDLE_RUN="$$(grep -v '^#' tools/gpu-bundle/ci-tests | paste -sd'|')" bash tools/gpu-bundle/check.sh "$$($(INSTALL) -path -plugin cpu-0.81)"

# A Go user outside the repository: a new module, an empty user cache, the README's one-line
# install from PyPI and the README's program on 8 devices.
newcomer:
	@bash tools/newcomer.sh

# Each parser fuzz target runs FUZZTIME; a crash fails the build.
fuzz-smoke:
	@bash tools/fuzz-smoke.sh $(FUZZTIME)

# Regenerates the JAX goldens into a temp dir and fails if they differ from the checked-in ones.
oracle-check: oracle-env
	@bash tools/oracle/check.sh

# Rewrites the checked-in goldens from JAX (then commit them).
oracle: oracle-env
	@bash tools/oracle/generate.sh testdata/oracle

bench: generate setup oracle-env
	@bash tools/bench.sh

# Builds and tests every package with Bazel: Debian's Bazel 4.2.3, rules_go 0.34 and BUILD files
# generated by gazelle (checked to be current), all installed into $(XLAMESH_CACHE_DIR)/bazel on
# first use and offline after that; the tests use the plugins of `make setup`. See docs/bazel.md.
.PHONY: bazel
bazel: setup
	@bash tools/bazel/run.sh

# Mutation testing (docs/testing.md), not part of make test: too slow for CI. gremlins (pinned,
# installed into the cache by tools/setup/gremlins.sh) plants one small bug at a time in the
# covered code of PKGS and runs their tests; tools/mutationreport prints each package's efficacy
# (killed / covered) and the surviving mutants. mutation-diff mutates only the lines changed
# since BASE (default: where HEAD left origin/main, or main, else HEAD~1), in the packages they
# touch. SAMPLE=N runs only the mutants of N lines of each package, drawn at random
# (MUTATION_SEED), for packages whose full run takes hours. MUTATION_WORKERS,
# MUTATION_TIMEOUT_COEFFICIENT and MUTATION_MIN tune it.
PKGS ?= ./mesh
BASE ?= $(shell git merge-base HEAD origin/main 2>/dev/null || git merge-base HEAD main 2>/dev/null || echo HEAD~1)
mutation: generate
	@bash tools/mutation.sh $(if $(SAMPLE),-sample $(SAMPLE)) $(PKGS)

mutation-diff: generate
	@bash tools/mutation.sh -diff $(BASE)
