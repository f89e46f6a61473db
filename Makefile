# xlamesh: the two commands the README promises, and the steps behind them.
#
#   make demo      # installs the pinned PJRT plugins if needed, runs the seed program on 8 CPU devices
#   make test      # installs the plugins and the oracle's JAX venv if needed, then runs every check
#
# Everything downloaded goes to .cache/ (ignored by git); set XLAMESH_CACHE_DIR to move it.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export XLAMESH_CACHE_DIR ?= $(CURDIR)/.cache
# Quiet XLA's C++ logging in test output; errors still reach stderr.
export TF_CPP_MIN_LOG_LEVEL ?= 1
GO ?= go
FUZZTIME ?= 30s

.PHONY: demo test setup oracle-env lint unit fuzz-smoke oracle-check oracle bench

demo: setup
	$(GO) run ./cmd/xlamesh-demo

# The test run comes last so that its "N passed, N failed, N skipped" line closes the output.
test: setup oracle-env lint fuzz-smoke oracle-check unit

# The pinned PJRT plugins (tools/setup/plugin.lock): the default CPU plugin of pjrt.Open(), a
# second CPU plugin of a newer PJRT API, and the CUDA plugin (test-gpu; pjrt's tests load it
# everywhere).
PLUGINS := xla-cpu-pjrt lammps-jax-pjrt-cpu jax-cuda12-pjrt

setup:
	@bash tools/setup/install-plugin.sh $(PLUGINS)

oracle-env:
	@bash tools/setup/oracle-env.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [[ -n "$$out" ]]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# Every test with the race detector; tools/testreport prints per-package counts, the PJRT
# client each integration package opened, and fails on any failure or skip.
unit:
	$(GO) test -race -count=1 -json ./... | $(GO) run ./tools/testreport

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
