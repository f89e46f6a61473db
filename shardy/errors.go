package shardy

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by this package wraps one of them
// (or is a *ParseError), so callers can test the kind with errors.Is. The
// sentinel texts are the wording of Shardy's own verifier; the wrapping error
// adds the offending mesh, axis, dimension or sizes.
var (
	// ErrSyntax is wrapped by every *ParseError.
	ErrSyntax = errors.New("syntax error")
	// ErrUnknownMesh: a sharding names a mesh symbol that is not defined.
	ErrUnknownMesh = errors.New("unknown mesh")
	// ErrUnknownAxis: an axis reference names an axis the mesh does not have.
	ErrUnknownAxis = errors.New("unknown axis name")
	// ErrDuplicateAxisRef: an axis (or overlapping sub-axes) is used twice in
	// one sharding, across dimensions, replicated and unreduced.
	ErrDuplicateAxisRef = errors.New("duplicate axis ref")
	// ErrRank: the number of dimension shardings differs from the tensor rank.
	ErrRank = errors.New("sharding doesn't match tensor rank")
	// ErrUnordered: replicated or unreduced axes are not sorted in mesh order.
	ErrUnordered = errors.New("axes are not ordered w.r.t. mesh")
	// ErrPriority: a negative priority, or a priority on an empty closed dimension.
	ErrPriority = errors.New("invalid priority")
	// ErrSubAxis: a sub-axis breaks Shardy's sub-axis rules (sizes, overlap,
	// mixing a sub-axis with its full axis, mergeable neighbours).
	ErrSubAxis = errors.New("invalid sub-axis")
	// ErrDeviceIDs: a mesh's device_ids are negative, more than one without
	// axes, or not a permutation of 0..N-1 for a mesh of N devices.
	ErrDeviceIDs = errors.New("invalid device ids")
	// ErrAxisSize: a mesh axis has a size below 1, or the sizes multiply past 2^31-1 devices.
	ErrAxisSize = errors.New("axis size must be at least 1")
	// ErrDuplicateAxisName: a mesh declares the same axis name twice.
	ErrDuplicateAxisName = errors.New("duplicate axis name")
	// ErrMaximal: a sharding on a maximal mesh has dimension shardings or
	// replicated/unreduced axes.
	ErrMaximal = errors.New("a maximal sharding can only have a sharding with rank 0 and no replicated or unreduced axes")
	// ErrCount: a per-value sharding has the wrong number of shardings.
	ErrCount = errors.New("shardings don't match number of values")
	// ErrUnsupported: a sharding has no equivalent in the requested form
	// (for example unreduced axes in a GSPMD string).
	ErrUnsupported = errors.New("unsupported sharding")
	// ErrDuplicateMesh: two sdy.mesh ops define the same symbol.
	ErrDuplicateMesh = errors.New("redefinition of mesh symbol")
	// ErrSpec: a mesh.NamedSharding cannot be converted (spec longer than
	// the rank, invalid spec).
	ErrSpec = errors.New("invalid partition spec")
)

// ParseError reports text the parser could not read. Offset is the byte
// offset in the input where the problem was found. Expected and Found
// describe the token wanted and the one seen; Msg replaces them for
// errors that are not about a missing token (for example a priority with a
// leading zero). A *ParseError wraps ErrSyntax.
type ParseError struct {
	Offset   int
	Expected string
	Found    string
	Msg      string
}

// Error returns "shardy: offset N: expected X, found Y" (or the message).
func (e *ParseError) Error() string {
	if e.Msg != "" {
		return fmt.Sprintf("shardy: offset %d: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("shardy: offset %d: expected %s, found %s", e.Offset, e.Expected, e.Found)
}

// Unwrap returns ErrSyntax.
func (e *ParseError) Unwrap() error { return ErrSyntax }

// kindError is an error with its own text that still matches the given
// sentinels with errors.Is.
type kindError struct {
	msg   string
	kinds []error
}

func (e *kindError) Error() string   { return e.msg }
func (e *kindError) Unwrap() []error { return e.kinds }

// errorf formats a message and makes it match kinds with errors.Is.
func errorf(kinds []error, format string, args ...any) error {
	return &kindError{msg: fmt.Sprintf(format, args...), kinds: kinds}
}
