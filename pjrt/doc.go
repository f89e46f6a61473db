// Package pjrt is xlamesh's binding to XLA through the PJRT C API: it finds and loads a PJRT
// plugin, opens a client, lists the client's devices with their attributes, compiles StableHLO
// text with Shardy or GSPMD partitioning for an explicit device assignment, moves buffers between
// host and devices, and executes SPMD programs on every device of an executable.
//
// In xlamesh's data flow it sits at the bottom: mesh describes where data lives, lower turns a
// program and its shardings into MLIR text, and pjrt compiles and runs that text. It imports
// neither mesh nor lower; its *Device satisfies mesh.Device by having the same methods.
//
// pjrt builds on github.com/gomlx/gopjrt v0.10.0 (PJRT C API 0.81) and adds, in the C code of
// the cc/ directory, what gopjrt lacks: a plugin probe that cannot crash on a bad file, device
// ids, kinds and attributes, and the output shapes of compiled executables.
//
// The default plugin is XLA's CPU plugin from the pinned xla-cpu-pjrt wheel, installed by
// `make setup` (tools/setup/install-plugin.sh) and found without configuration; see Open and
// FindPlugin. Every value here is safe for concurrent use; resources holding device memory have
// Close methods, with finalizers only as a safety net.
package pjrt
