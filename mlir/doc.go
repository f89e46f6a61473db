// Package mlir reads MLIR text: one scanner for every package that looks inside a StableHLO
// module, and one checker that stops what XLA would misread or could not survive before the
// text reaches the compiler.
//
// It is the ground floor of the text path and imports no other xlamesh package. Package
// shardy reads its string literals and finds sdy.mesh ops with it; package stablehlo prints
// symbol names with Symbol and checks them with CheckName; package lower/wrap reads modules
// written elsewhere with the Scanner and Check; package pjrt runs Check on every program in Client.Compile, with the
// number of devices it compiles for, before the compile cache or the plugin sees it (a
// program in MLIR bytecode is first read as text by mlir/bytecode, and that text is checked
// and compiled; Check itself refuses bytecode with ErrBytecode):
//
//	mlir ← shardy ← lower ← jit
//	mlir ← stablehlo ← lower
//	mlir ← lower/wrap ← jit
//	mlir ← pjrt ← jit
//
// # Scanning
//
// A Scanner splits text into the tokens of MLIR's own lexer (identifiers, @symbols, %values,
// ^blocks, #attributes, !types, numbers, string literals with MLIR's escapes, punctuation),
// skips whitespace and // comments, and checks that brackets nest, so code that reads tokens
// never mistakes a string or a comment for code:
//
//	s := mlir.NewScanner(text)
//	for t := s.Next(); t.Kind != mlir.EOF; t = s.Next() {
//		if t.Is(mlir.Ident, "func.func") && s.Depth() == 1 { ... }
//	}
//	if err := s.Err(); err != nil { ... } // *mlir.Error wrapping ErrSyntax or ErrNesting
//
// Quote and Unquote convert between Go strings and MLIR string literals exactly as MLIR
// prints and reads them; Symbol prints a symbol reference, quoted when needed (@"jit_my-fn").
//
// # Checking
//
// Check(text, Partitions(n)) returns nil or the first problem, as an *Error with a line and
// column, the offending symbol, axis, op, type or attribute, and one of the sentinels:
// ErrSyntax, ErrNesting (MaxNesting, MaxRegionDepth, MaxTypeDepth), ErrName (CheckName),
// ErrRecursion, ErrTensorSize, ErrPartitions, ErrSharding (CheckSharding),
// ErrUnsupportedOp (also custom calls and composites that XLA interprets itself, held to the
// operands and attribute kinds XLA reads) and ErrBytecode. Each rule stops a module that, on the pinned XLA CPU plugin, killed the
// process inside the compiler, compiled and then never returned from execution, or compiled
// something other than what was written (a sharding XLA silently dropped, a module for 8
// partitions run on 1 device).
//
// # Names
//
// CheckName is the rule for names that reach XLA: symbol names and Shardy mesh axis names
// are printable ASCII (0x20 to 0x7E) other than the backslash. Within that class every
// character is quoted and escaped as MLIR reads it and survives a real compile; outside it
// XLA aborts (backslashes, bytes outside ASCII) or reads names back changed (control bytes).
// Package mesh applies the same rule to axis names when a mesh is built.
package mlir
