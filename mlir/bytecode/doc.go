// Package bytecode reads MLIR bytecode: it turns a StableHLO portable artifact — the
// module inside a jax.export artifact (package jaxexport's Exported.Module) — into
// StableHLO MLIR text, so that code which works on text (wrap.Module re-sharding a module,
// mlir.Check) can work on modules JAX exported.
//
// It is pure Go and sits one floor above packages mlir and shardy on the text path: it
// imports mlir (MLIR's quoting and nesting limits), shapes (half-precision floats) and
// shardy, whose values its Shardy attributes decode to and whose one printer writes
// them; it keeps no Shardy model or printer of its own:
//
//	jaxexport → bytecode.ToText → wrap.Module → pjrt.Client.Compile
//
// # Format
//
// A portable artifact is MLIR bytecode (mlir.llvm.org/docs/BytecodeFormat) of the VHLO
// dialect, StableHLO's versioned copy of itself, mixed with builtin and Shardy (sdy) ops
// and attributes. The reader decodes the file's tables (strings, dialects and op names,
// attributes and types, properties, resources) and its IR, with the encodings of the
// builtin dialect, of VHLO (StableHLO's VhloBytecode.cpp) and of sdy (Shardy's
// bytecode.td). Bytecode versions 0 to 6 are read; JAX 0.8.1 writes version 6 with
// StableHLO 1.13 ("StableHLO_v1.13.0" in the header, see ReadInfo), JAX 0.12.0.1 version 6
// with StableHLO 1.18.
//
// # Text
//
// ToText prints the module as StableHLO's VHLO-to-StableHLO legalization would produce it:
// the module, functions and sdy.mesh ops in their pretty forms, every other op in MLIR's
// generic form, VHLO names, types and attributes in their StableHLO, func and builtin
// spellings, Shardy attributes in Shardy's own syntax (the shardy.Attr values they decode
// to, printed by package shardy as MLIR prints them), no locations. Its doc comment lists
// the details. The output parses with the MLIR jaxlib ships, to the same module as
// stablehlo.deserialize_portable_artifact gives, and compiles on the XLA CPU plugin to
// programs that compute the same bits as the artifact itself (TestGoldensRun,
// TestProgramsRun).
//
// # Hostile input
//
// Every length, count and index read from the input is checked against what is left
// before anything is allocated; references between attributes and types that form a
// cycle, nesting deeper than mlir.MaxTypeDepth or mlir.MaxRegionDepth, and text that would
// grow past a limit linear in the input (attributes can share parts, so a small file can
// describe exponential text) are errors. Shardy values hold their parts by value, so the
// text of each Shardy attribute is bounded before its value is built, and all of them
// together may not pass a limit linear in the input either (TestSdyBlowup). ToText never
// panics on its input; errors are *Error values wrapping ErrBytecode (malformed bytes) or
// ErrUnsupported (well-formed, but an op, attribute, type or version this reader does not
// convert), with the section and byte offset where they were found. FuzzToText checks
// this.
package bytecode
