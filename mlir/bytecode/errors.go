package bytecode

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. Every error of this package is an *Error whose Kind is one of them.
var (
	// ErrBytecode: the bytes are not well-formed MLIR bytecode (a bad magic number, a
	// length or index past the end of the input or of a table, a varint that overflows,
	// a reference cycle, trailing bytes where a structure must end).
	ErrBytecode = errors.New("malformed MLIR bytecode")
	// ErrUnsupported: well-formed bytecode that uses something the reader does not
	// convert: an unknown dialect, op, attribute or type encoding, a bytecode version
	// outside 0..6, or a VHLO construct without a StableHLO text form here.
	ErrUnsupported = errors.New("unsupported MLIR bytecode")
)

// Error is a problem with a bytecode input: its kind (ErrBytecode or ErrUnsupported),
// the section being read and the byte offset in the input where it was found.
type Error struct {
	Kind    error  // ErrBytecode or ErrUnsupported
	Section string // "header", "string", "dialect", "attr", "type", "properties", "resource", "ir", "vhlo"
	Off     int    // byte offset in the input; -1 when the error is not about one place
	Msg     string // what is wrong
}

// Error formats as "bytecode: attr section, offset 123: malformed MLIR bytecode: ...".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("bytecode: ")
	if e.Section != "" {
		b.WriteString(e.Section)
		b.WriteString(" section")
		if e.Off >= 0 {
			b.WriteString(", ")
		}
	}
	if e.Off >= 0 {
		b.WriteString("offset ")
		b.WriteString(strconv.Itoa(e.Off))
	}
	if e.Section != "" || e.Off >= 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Kind.Error())
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return b.String()
}

// Unwrap returns Kind.
func (e *Error) Unwrap() error { return e.Kind }
