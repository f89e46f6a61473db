package mesh

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Sentinel errors. Every error returned by this package wraps one of them
// (test with errors.Is) and carries the offending axis, dimension or sizes in
// its message. The most common ones also come as typed errors
// (DuplicateAxisError, UnknownAxisError, RankError, IndivisibleError) for
// errors.As.
var (
	// ErrInvalidMesh reports a malformed mesh: axis count mismatch, empty or
	// malformed axis name, axis size < 1, bad axis type, nil device, or a
	// sharding over an empty mesh.
	ErrInvalidMesh = errors.New("invalid mesh")
	// ErrDuplicateAxis reports an axis name used twice, in a mesh or a spec.
	ErrDuplicateAxis = errors.New("duplicate axis")
	// ErrUnknownAxis reports a spec or rule naming an axis the mesh lacks.
	ErrUnknownAxis = errors.New("unknown mesh axis")
	// ErrDuplicateDevice reports a device (by id) placed twice in a mesh.
	ErrDuplicateDevice = errors.New("duplicate device")
	// ErrDeviceCount reports a device list whose length is not the mesh size.
	ErrDeviceCount = errors.New("device count mismatch")
	// ErrInvalidSpec reports a malformed PartitionSpec entry.
	ErrInvalidSpec = errors.New("invalid partition spec")
	// ErrUnconstrained reports Unconstrained where it is not allowed.
	ErrUnconstrained = errors.New("unconstrained dimension not allowed")
	// ErrRank reports a spec longer than the rank of the array it is applied to.
	ErrRank = errors.New("rank mismatch")
	// ErrIndivisible reports an array dimension not divisible by its number
	// of partitions.
	ErrIndivisible = errors.New("dimension not divisible")
	// ErrShape reports a malformed array shape (negative dimension).
	ErrShape = errors.New("invalid shape")
	// ErrNoDevices reports a query needing devices on an abstract mesh.
	ErrNoDevices = errors.New("abstract mesh has no devices")
	// ErrNotContiguous reports a process's devices that do not form a
	// contiguous sub-cube of the mesh (LocalMesh).
	ErrNotContiguous = errors.New("devices not contiguous")
	// ErrNoAssignment reports that Create found no assignment of logical
	// mesh axes to physical axes, or a physical layout it cannot use.
	ErrNoAssignment = errors.New("no device assignment")
	// ErrRule reports a malformed logical axis rule, a repeated logical
	// name, or (with RaiseError) a logical name no rule matched.
	ErrRule = errors.New("logical axis rule")
	// ErrUnsupported reports a request outside what a function supports,
	// such as visualising a rank-3 array.
	ErrUnsupported = errors.New("unsupported")
	// ErrAxisName reports an axis name with a byte XLA cannot carry through a
	// compile (a backslash, a control byte, a byte outside ASCII); see
	// NewAbstract. It comes as an *AxisNameError, which also wraps
	// ErrInvalidMesh.
	ErrAxisName = errors.New("unsupported axis name")
	// ErrMeshSize reports axis sizes whose product exceeds MaxSize (or would
	// overflow int). It is wrapped together with ErrInvalidMesh.
	ErrMeshSize = errors.New("mesh too large")
	// ErrNonUniform reports a sharding whose processes do not split a
	// dimension into equal, disjoint or identical sets of blocks, so a
	// process-local size says nothing about the global one (JAX's
	// NonUniformShardingError).
	ErrNonUniform = errors.New("non-uniform sharding across processes")
	// ErrProcessData reports process-local data whose shape fits neither
	// the global shape nor the part of it the process addresses.
	ErrProcessData = errors.New("invalid process-local data")
	// ErrMemoryKind reports a memory kind a sharding's devices cannot
	// address; it comes as a *MemoryKindError.
	ErrMemoryKind = errors.New("invalid memory kind")
)

// AxisNameError reports an axis name NewAbstract refuses: the first byte
// outside printable ASCII, or a backslash. It wraps ErrInvalidMesh and
// ErrAxisName.
type AxisNameError struct {
	Axis   int    // position of the axis in the mesh
	Name   string // the name as given
	Byte   int    // offset of the first byte at fault
	Reason string // what that byte is, e.g. "a backslash"
}

// Error returns the message, e.g. `mesh: invalid mesh: axis 0 name "a\\b"
// contains a backslash (byte 1); axis names are printable ASCII other than '\'`.
func (e *AxisNameError) Error() string {
	return fmt.Sprintf("mesh: %v: axis %d name %q contains %s (byte %d); axis names are printable ASCII other than '\\'",
		ErrInvalidMesh, e.Axis, e.Name, e.Reason, e.Byte)
}

// Unwrap returns ErrInvalidMesh and ErrAxisName.
func (e *AxisNameError) Unwrap() []error { return []error{ErrInvalidMesh, ErrAxisName} }

// badAxisName returns the offset of the first byte of name that axis names may
// not hold and what it is, or -1. It is the rule of mlir.CheckName (mesh
// imports no other package; mlir's tests check that the two agree).
func badAxisName(name string) (int, string) {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '\\':
			return i, "a backslash"
		case c == 0:
			return i, "a NUL byte"
		case c < 0x20 || c == 0x7f:
			return i, fmt.Sprintf("the control byte 0x%02X", c)
		case c >= 0x80:
			return i, fmt.Sprintf("the byte 0x%02X, outside ASCII", c)
		}
	}
	return -1, ""
}

// DuplicateAxisError reports mesh axes that a spec maps more than once
// (JAX's DuplicateSpecError). It wraps ErrDuplicateAxis.
type DuplicateAxisError struct {
	Spec PartitionSpec // the offending spec
	Axes []string      // the repeated axes, sorted
}

// Error returns the message, in JAX's wording.
func (e *DuplicateAxisError) Error() string {
	return fmt.Sprintf("mesh: a single NamedSharding spec specification can map every mesh axis to at most one positional dimension, but %s has duplicate entries for %s",
		e.Spec, backquoted(e.Axes))
}

// Unwrap returns ErrDuplicateAxis.
func (e *DuplicateAxisError) Unwrap() error { return ErrDuplicateAxis }

// UnknownAxisError reports a spec naming an axis the mesh does not have.
// It wraps ErrUnknownAxis.
type UnknownAxisError struct {
	Spec     PartitionSpec // the offending spec
	Dim      int           // the spec dimension naming the axis
	Axis     string        // the unknown axis
	MeshAxes []string      // the mesh's axis names, in mesh order
}

// Error returns the message, in JAX's wording.
func (e *UnknownAxisError) Error() string {
	return fmt.Sprintf("mesh: resource axis %s of %s (dim %d) is not found in mesh: %s",
		e.Axis, e.Spec, e.Dim, pyStrTuple(e.MeshAxes))
}

// Unwrap returns ErrUnknownAxis.
func (e *UnknownAxisError) Unwrap() error { return ErrUnknownAxis }

// RankError reports a sharding applied to an array of too small a rank.
// It wraps ErrRank.
type RankError struct {
	Sharding string // the sharding's String form
	SpecLen  int    // the number of spec entries
	Rank     int    // the array's rank
}

// Error returns the message, in JAX's wording.
func (e *RankError) Error() string {
	msg := fmt.Sprintf("mesh: sharding %s is only valid for values of rank at least %d, but was applied to a value of rank %d",
		e.Sharding, e.SpecLen, e.Rank)
	if e.Rank == 0 {
		msg += " (for scalars the PartitionSpec should be P())"
	}
	return msg
}

// Unwrap returns ErrRank.
func (e *RankError) Unwrap() error { return ErrRank }

// IndivisibleError reports an array dimension that its number of partitions
// does not evenly divide (JAX's IndivisibleError). It wraps ErrIndivisible.
type IndivisibleError struct {
	Sharding string // the sharding's String form
	Dim      int    // the array dimension
	Parts    int    // how many times the dimension is partitioned
	Size     int    // the dimension size
	Shape    []int  // the full array shape
	Tiling   []int  // partitions per dimension
}

// Error returns the message, in JAX's wording.
func (e *IndivisibleError) Error() string {
	return fmt.Sprintf("mesh: %s implies that array axis %d is partitioned %d times, but the dimension size is %d (full shape: %s, per-dimension tiling factors: %s should evenly divide the shape)",
		e.Sharding, e.Dim, e.Parts, e.Size, pyIntTuple(e.Shape), pyIntTuple(e.Tiling))
}

// Unwrap returns ErrIndivisible.
func (e *IndivisibleError) Unwrap() error { return ErrIndivisible }

// pyQuote quotes s the way Python's repr quotes a simple string.
func pyQuote(s string) string {
	return "'" + pyEscaper.Replace(s) + "'"
}

// pyEscaper escapes a string for a single-quoted Python literal; built once (a Replacer is
// safe for concurrent use).
var pyEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// pyStrTuple formats names as a Python tuple: ('x', 'y'), ('x',), ().
func pyStrTuple(names []string) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyQuote(n))
	}
	if len(names) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// pyIntTuple formats ints as a Python tuple: (3, 2), (3,), ().
func pyIntTuple(v []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, n := range v {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(n))
	}
	if len(v) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// backquoted formats sorted names as JAX's show_axes does: `a`, `b`.
func backquoted(names []string) string {
	s := slices.Clone(names)
	slices.Sort(s)
	for i, n := range s {
		s[i] = "`" + n + "`"
	}
	return strings.Join(s, ", ")
}
