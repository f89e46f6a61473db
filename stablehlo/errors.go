package stablehlo

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors. Errors returned by Build wrap one of them (test with errors.Is)
// inside an *OpError that names the function, the op and the operand (errors.As).
var (
	// ErrShape: operand shapes do not fit the op (rank, dimension sizes, element count).
	ErrShape = errors.New("shape mismatch")
	// ErrDType: an operand has an element type the op does not accept.
	ErrDType = errors.New("element type mismatch")
	// ErrForeignValue: an operand was defined in another function or outside an isolated region.
	ErrForeignValue = errors.New("value from another function")
	// ErrInvalidValue: an operand is the zero Value.
	ErrInvalidValue = errors.New("invalid value")
	// ErrIndivisible: a dimension is not divisible by a replica group's size (or, in
	// package lower, by the product of its manual axes).
	ErrIndivisible = errors.New("not divisible")
	// ErrFunction: a function or region is used wrongly (no return, returned twice, wrong
	// call arity, arguments added to a region).
	ErrFunction = errors.New("invalid function")
	// ErrReplicaGroups: the replica groups or source/target pairs of a collective are
	// malformed (empty, unequal sizes, negative or repeated ids).
	ErrReplicaGroups = errors.New("invalid replica groups")
	// ErrEinsum: an einsum spec is malformed (see Function.Einsum).
	ErrEinsum = errors.New("invalid einsum spec")
)

// OpError is the error Build returns for the first op that failed. It names the function
// (@main or a helper), the op (as StableHLO names it, e.g. "add", "dot_general"), and, when
// an operand is at fault, its index and SSA name.
//
// Op writers record one with Function.Fail or Function.Failf; the first one sticks.
type OpError struct {
	Pkg     string // package reporting it, the message prefix ("stablehlo" when empty; "lower" for lower's modules)
	Func    string // function name without '@'
	Op      string // op name, e.g. "dot_general"
	Operand int    // operand index, or -1 when no single operand is at fault
	Value   string // SSA name of the operand ("%arg0", "%3"), empty if unknown
	Err     error  // the cause, wrapping one of the sentinel errors
}

// Error formats as "stablehlo: @main: add: operand 1 (%3): <cause>".
func (e *OpError) Error() string {
	var b strings.Builder
	if e.Pkg == "" {
		b.WriteString("stablehlo")
	} else {
		b.WriteString(e.Pkg)
	}
	b.WriteString(": @")
	b.WriteString(e.Func)
	b.WriteString(": ")
	b.WriteString(e.Op)
	if e.Operand >= 0 {
		b.WriteString(": operand ")
		b.WriteString(strconv.Itoa(e.Operand))
		if e.Value != "" {
			b.WriteString(" (")
			b.WriteString(e.Value)
			b.WriteString(")")
		}
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }
