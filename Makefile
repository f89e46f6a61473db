# xlamesh: the two commands the README promises, and the steps behind them.
#
#   make demo      # installs the pinned CPU plugin if needed, runs the seed program on 8 CPU devices
#   make test      # installs the plugins and the oracle's JAX venv if needed, then runs every check
#   make test-gpu  # the integration suites on the CUDA plugin, on a machine with an NVIDIA GPU
#
# Everything downloaded goes to .cache/ (ignored by git); set XLAMESH_CACHE_DIR to move it.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export XLAMESH_CACHE_DIR ?= $(CURDIR)/.cache
GO ?= go
FUZZTIME ?= 30s

.PHONY: demo test test-gpu setup newcomer oracle-env lint unit fuzz-smoke oracle-check oracle bench

demo:
	@$(INSTALL) -check -plugin cpu >/dev/null
	$(GO) run ./cmd/xlamesh-demo

# The test run comes last so that its "N passed, N failed, N skipped" line closes the output.
test: setup oracle-env lint fuzz-smoke oracle-check newcomer unit

# The pinned PJRT plugins (pjrt/install.Known): the default CPU plugin of pjrt.Open(), a second
# CPU plugin of a newer PJRT API, and the CUDA plugin (test-gpu; pjrt's tests load it everywhere).
# The installer is the one users run: `xlamesh install-plugin`, pure Go, no Python.
PLUGINS := cpu,cpu-0.115,cuda12
INSTALL := $(GO) run ./cmd/xlamesh install-plugin
# The packages whose tests open a PJRT client; they run once more per extra plugin.
INTEGRATION := ./pjrt/... ./jit ./lower ./examples ./internal/oracletest

setup:
	@$(INSTALL) -check -plugin $(PLUGINS) >/dev/null

oracle-env:
	@bash tools/setup/oracle-env.sh

# gofmt, go vet, then staticcheck (honnef.co/go/tools, pinned and installed into the cache by
# tools/setup/staticcheck.sh) over every package.
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [[ -n "$$out" ]]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@staticcheck=$$(bash tools/setup/staticcheck.sh); echo "staticcheck ./..."; "$$staticcheck" ./...

# Every test with the race detector on the default plugin, then the integration packages on the
# second CPU plugin. tools/testreport prints per pass and package the counts and the PJRT client
# opened, and fails on any failure or skip; its last line counts both passes.
unit:
	@second=$$($(INSTALL) -path -plugin cpu-0.115); \
	( r=0; \
	  echo "testreport-pass: 1/2 default plugin, all packages"; \
	  env -u XLAMESH_PJRT_PLUGIN -u XLAMESH_TEST_PLATFORM $(GO) test -race -count=1 -json ./... || r=1; \
	  echo "testreport-pass: 2/2 lammps-jax-pjrt-cpu, integration packages"; \
	  env -u XLAMESH_TEST_PLATFORM XLAMESH_PJRT_PLUGIN="$$second" $(GO) test -race -count=1 -json $(INTEGRATION) || r=1; \
	  exit $$r ) | $(GO) run ./tools/testreport

# The integration packages on the CUDA plugin; fails when nvidia-smi shows no GPU.
test-gpu:
	@nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || { \
	  echo "make test-gpu: no GPU found (nvidia-smi is missing or lists no GPU); run it on a machine with an NVIDIA GPU and its driver" >&2; exit 1; }
	@$(MAKE) --no-print-directory setup
	@cuda=$$($(INSTALL) -path -plugin cuda12); \
	( echo "testreport-pass: jax-cuda12-pjrt with XLAMESH_TEST_PLATFORM=gpu, integration packages"; \
	  XLAMESH_PJRT_PLUGIN="$$cuda" XLAMESH_TEST_PLATFORM=gpu $(GO) test -race -count=1 -json $(INTEGRATION) ) | $(GO) run ./tools/testreport

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

bench: setup oracle-env
	@bash tools/bench.sh
