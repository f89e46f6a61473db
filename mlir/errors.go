package mlir

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. Every error of this package is an *Error whose Kind is one of them, so
// callers test with errors.Is and read the position and the offending thing with errors.As.
var (
	// ErrSyntax: the text is not MLIR as MLIR's lexer reads it (an unterminated string, an
	// unknown escape, a bracket closed by the wrong kind, a character MLIR does not know).
	ErrSyntax = errors.New("malformed MLIR")
	// ErrNesting: brackets, regions or types nest deeper than MaxNesting, MaxRegionDepth or
	// MaxTypeDepth.
	ErrNesting = errors.New("nesting too deep")
	// ErrName: a symbol name or Shardy axis name outside the names XLA survives (see CheckName).
	ErrName = errors.New("unsupported name")
	// ErrRecursion: a function calls itself, directly or through others.
	ErrRecursion = errors.New("recursive call")
	// ErrTensorSize: a tensor type whose element count or byte size overflows int64.
	ErrTensorSize = errors.New("tensor too large")
	// ErrPartitions: mhlo.num_partitions or mhlo.num_replicas disagrees with the devices the
	// module is compiled for.
	ErrPartitions = errors.New("partition count mismatch")
	// ErrSharding: an mhlo.sharding string XLA would not parse (and silently drop) or could not
	// survive.
	ErrSharding = errors.New("invalid mhlo.sharding")
	// ErrUnsupportedOp: an op the runtime cannot serve (infeed, outfeed, send, recv, host
	// callbacks): XLA compiles it and execution never returns.
	ErrUnsupportedOp = errors.New("unsupported op")
	// ErrBytecode: MLIR bytecode where text is read: Check never passes a program it has
	// not read (mlir/bytecode.ToText reads bytecode as text).
	ErrBytecode = errors.New("MLIR bytecode, not text")
)

// Error is a problem in MLIR text: its kind (one of the sentinels), where it is, and the
// thing it is about.
type Error struct {
	Kind error  // ErrSyntax, ErrNesting, ErrName, ...
	Off  int    // byte offset in the text; -1 when the error is not about a place in a text
	Line int    // 1-based line of Off (0 when Off is -1)
	Col  int    // 1-based column of Off, in bytes (0 when Off is -1)
	What string // the symbol, axis, op, type or attribute at fault, as written; may be empty
	Msg  string // what is wrong with it
}

// Error formats as "mlir: 3:14: unsupported name: axis "a\\b": byte 1 is '\\', ...".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("mlir: ")
	if e.Off >= 0 && e.Line > 0 {
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Col))
		b.WriteString(": ")
	}
	b.WriteString(e.Kind.Error())
	if e.What != "" {
		b.WriteString(": ")
		b.WriteString(e.What)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return b.String()
}

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }

// errorAt returns an *Error at byte offset off of src (off < 0: no position).
func errorAt(src string, off int, kind error, what, msg string) *Error {
	e := &Error{Kind: kind, Off: off, What: what, Msg: msg}
	if off >= 0 {
		e.Line, e.Col = Position(src, off)
	}
	return e
}

// Position returns the 1-based line and byte column of offset off in src (offsets past the
// end count as the end).
func Position(src string, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	line = 1 + strings.Count(src[:off], "\n")
	return line, off - strings.LastIndexByte(src[:off], '\n')
}
