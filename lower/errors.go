package lower

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
	// ErrUnknownAxis: a mesh axis name is not in the mesh.
	ErrUnknownAxis = errors.New("unknown mesh axis")
	// ErrMeshMismatch: a sharding uses a mesh whose shape differs from the module's mesh.
	ErrMeshMismatch = errors.New("mesh mismatch")
	// ErrIndivisible: a dimension is not divisible by the product of its manual axes.
	ErrIndivisible = errors.New("not divisible")
	// ErrSharding: a sharding does not fit its value (rank, axes, manual axes).
	ErrSharding = errors.New("invalid sharding")
	// ErrNotManual: a collective was used outside a shard_map body or over non-manual axes.
	ErrNotManual = errors.New("not in a manual computation")
	// ErrFunction: a function is used wrongly (no return, returned twice, wrong call arity).
	ErrFunction = errors.New("invalid function")
	// ErrPartitioner: the op is not available with the module's partitioner.
	ErrPartitioner = errors.New("unsupported with this partitioner")
	// ErrWrap: Wrap could not find or annotate @main in the given text.
	ErrWrap = errors.New("cannot wrap module")
)

// OpError is the error Build returns for the first op that failed. It names the function
// (@main or a helper), the op (as StableHLO names it, e.g. "add", "sdy.manual_computation"),
// and, when an operand is at fault, its index and SSA name.
type OpError struct {
	Func    string // function name without '@'
	Op      string // op name, e.g. "dot_general"
	Operand int    // operand index, or -1 when no single operand is at fault
	Value   string // SSA name of the operand ("%arg0", "%3"), empty if unknown
	Err     error  // the cause, wrapping one of the sentinel errors
}

// Error formats as "lower: @main: add: operand 1 (%3): <cause>".
func (e *OpError) Error() string {
	var b strings.Builder
	b.WriteString("lower: @")
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
