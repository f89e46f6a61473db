package mesh

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// AxisType says how a mesh axis takes part in sharding propagation (JAX's
// jax.sharding.AxisType). The zero value is invalid.
type AxisType uint8

const (
	// Auto axes are sharded by the compiler's propagation.
	Auto AxisType = iota + 1
	// Explicit axes carry sharding in the types of values.
	Explicit
	// Manual axes are handled by the user's code (inside shard_map).
	Manual
)

// String returns "Auto", "Explicit" or "Manual" (JAX's repr), or
// "AxisType(n)" for an invalid value.
func (t AxisType) String() string {
	switch t {
	case Auto:
		return "Auto"
	case Explicit:
		return "Explicit"
	case Manual:
		return "Manual"
	}
	return "AxisType(" + strconv.Itoa(int(t)) + ")"
}

func (t AxisType) valid() bool { return t >= Auto && t <= Manual }

// Axis is one named mesh axis: its name, size and type.
type Axis struct {
	Name string
	Size int
	Type AxisType
}

// Abstract is a mesh without devices (JAX's AbstractMesh): ordered axis
// names, sizes and types. Lowering keys on it, so two meshes with the same
// Abstract share lowered code. Abstract is an immutable value; accessors
// return copies. The zero Abstract is the empty mesh (no axes, size 0).
type Abstract struct {
	names []string
	sizes []int
	types []AxisType
	size  int
	key   string
}

// MaxSize is the largest number of devices a mesh may have: XLA counts partitions in an
// int32 (mhlo.num_partitions).
const MaxSize = math.MaxInt32

// NewAbstract returns the abstract mesh with the given axis sizes and names.
// types gives one AxisType per axis; none means all Auto. It returns an error
// wrapping ErrInvalidMesh when the counts differ, a name is empty, a size is
// < 1 or a type is invalid; also wrapping ErrMeshSize when the sizes multiply
// to more than MaxSize; an *AxisNameError (wrapping ErrInvalidMesh and
// ErrAxisName) for a name with a byte outside printable ASCII or a backslash;
// and ErrDuplicateAxis when a name repeats. NewAbstract(nil, nil) is the empty
// mesh.
//
// Axis names are printable ASCII (0x20 to 0x7E) other than the backslash:
// letters, digits and any punctuation, spaces and quotes included. XLA's
// compiler aborts the process on a Shardy axis name with a backslash or a byte
// outside ASCII (every non-ASCII letter), and reads control bytes back as
// other names, so those are refused here, before any lowering.
func NewAbstract(sizes []int, names []string, types ...AxisType) (Abstract, error) {
	if len(sizes) != len(names) {
		return Abstract{}, fmt.Errorf("mesh: %w: got %d axis sizes %s but %d axis names %s",
			ErrInvalidMesh, len(sizes), pyIntTuple(sizes), len(names), pyStrTuple(names))
	}
	for i, n := range names {
		if n == "" {
			return Abstract{}, fmt.Errorf("mesh: %w: axis %d has an empty name (axis names %s)", ErrInvalidMesh, i, pyStrTuple(names))
		}
		if at, what := badAxisName(n); at >= 0 {
			return Abstract{}, &AxisNameError{Axis: i, Name: n, Byte: at, Reason: what}
		}
		if j := slices.Index(names[:i], n); j >= 0 {
			return Abstract{}, fmt.Errorf("mesh: %w %q: axes %d and %d of %s", ErrDuplicateAxis, n, j, i, pyStrTuple(names))
		}
	}
	size := 1
	for i, s := range sizes {
		if s < 1 {
			return Abstract{}, fmt.Errorf("mesh: %w: axis %q has size %d, want >= 1", ErrInvalidMesh, names[i], s)
		}
		if size > MaxSize/s {
			return Abstract{}, fmt.Errorf("mesh: %w: %w: axis sizes %s multiply to more than %d devices (at axis %q)",
				ErrInvalidMesh, ErrMeshSize, pyIntTuple(sizes), MaxSize, names[i])
		}
		size *= s
	}
	if len(sizes) == 0 {
		size = 0
	}
	var ts []AxisType
	switch {
	case len(types) == 0:
		ts = make([]AxisType, len(names))
		for i := range ts {
			ts[i] = Auto
		}
	case len(types) != len(names):
		return Abstract{}, fmt.Errorf("mesh: %w: number of axis names should match the number of axis types, got axis names %s and %d axis types %v",
			ErrInvalidMesh, pyStrTuple(names), len(types), types)
	default:
		for i, t := range types {
			if !t.valid() {
				return Abstract{}, fmt.Errorf("mesh: %w: axis %q has invalid type %v", ErrInvalidMesh, names[i], t)
			}
		}
		ts = slices.Clone(types)
	}
	a := Abstract{names: slices.Clone(names), sizes: slices.Clone(sizes), types: ts, size: size}
	a.key = a.makeKey()
	return a, nil
}

// MustAbstract is NewAbstract that panics on error, for tests and package
// variables.
func MustAbstract(sizes []int, names []string, types ...AxisType) Abstract {
	a, err := NewAbstract(sizes, names, types...)
	if err != nil {
		panic(err)
	}
	return a
}

func (a Abstract) makeKey() string {
	var b strings.Builder
	for i, n := range a.names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(n))
		b.WriteByte('=')
		b.WriteString(strconv.Itoa(a.sizes[i]))
		b.WriteByte(':')
		b.WriteString(a.types[i].String())
	}
	return b.String()
}

// AxisNames returns the axis names in mesh order.
func (a Abstract) AxisNames() []string { return slices.Clone(a.names) }

// AxisSizes returns the axis sizes in mesh order.
func (a Abstract) AxisSizes() []int { return slices.Clone(a.sizes) }

// AxisTypes returns the axis types in mesh order.
func (a Abstract) AxisTypes() []AxisType { return slices.Clone(a.types) }

// NumAxes returns the number of axes.
func (a Abstract) NumAxes() int { return len(a.names) }

// Size returns the product of the axis sizes, or 0 for the empty mesh.
func (a Abstract) Size() int { return a.size }

// Empty reports whether the mesh has no axes (JAX's Mesh.empty).
func (a Abstract) Empty() bool { return a.size == 0 }

// Shape returns the axes in mesh order (JAX's Mesh.shape, an ordered
// name -> size map).
func (a Abstract) Shape() []Axis {
	out := make([]Axis, len(a.names))
	for i := range a.names {
		out[i] = Axis{Name: a.names[i], Size: a.sizes[i], Type: a.types[i]}
	}
	return out
}

// AxisIndex returns the position of the named axis, or -1 if absent.
func (a Abstract) AxisIndex(name string) int { return slices.Index(a.names, name) }

// AxisSize returns the size of the named axis and whether it exists.
func (a Abstract) AxisSize(name string) (int, bool) {
	i := a.AxisIndex(name)
	if i < 0 {
		return 0, false
	}
	return a.sizes[i], true
}

// AxisType returns the type of the named axis and whether it exists.
func (a Abstract) AxisType(name string) (AxisType, bool) {
	i := a.AxisIndex(name)
	if i < 0 {
		return 0, false
	}
	return a.types[i], true
}

// WithAxisTypes returns a copy with new axis types (one per axis), or an
// error wrapping ErrInvalidMesh.
func (a Abstract) WithAxisTypes(types ...AxisType) (Abstract, error) {
	if len(types) != len(a.names) {
		return Abstract{}, fmt.Errorf("mesh: %w: number of axis names should match the number of axis types, got axis names %s and %d axis types %v",
			ErrInvalidMesh, pyStrTuple(a.names), len(types), types)
	}
	return NewAbstract(a.sizes, a.names, types...)
}

// Equal reports whether a and b have the same axis names, sizes and types.
func (a Abstract) Equal(b Abstract) bool { return a.key == b.key }

// Key returns a canonical string: equal meshes have equal keys and different
// meshes different keys. Use it as a map key.
func (a Abstract) Key() string { return a.key }

// String returns what JAX (0.8.1 to 0.12) prints for an AbstractMesh (its str and
// repr are the same): AbstractMesh('x': 4, 'y': 2, axis_types=(Auto, Auto)),
// every axis type included; the empty mesh is AbstractMesh((), axis_types=()).
func (a Abstract) String() string {
	if a.Empty() {
		return "AbstractMesh((), axis_types=())"
	}
	return "Abstract" + a.body()
}

// body returns JAX's str of a Mesh with these axes:
// "Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto))", or "Mesh()" when empty.
func (a Abstract) body() string {
	if a.Empty() {
		return "Mesh()"
	}
	var b strings.Builder
	b.WriteString("Mesh(")
	for i, n := range a.names {
		b.WriteString(pyQuote(n))
		b.WriteString(": ")
		b.WriteString(strconv.Itoa(a.sizes[i]))
		b.WriteString(", ")
	}
	b.WriteString("axis_types=(")
	for i, t := range a.types {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.String())
	}
	if len(a.types) == 1 {
		b.WriteByte(',')
	}
	b.WriteString("))")
	return b.String()
}

// coords returns the row-major coordinates of flat position p.
func (a Abstract) coords(p int) []int {
	c := make([]int, len(a.sizes))
	for i := len(a.sizes) - 1; i >= 0; i-- {
		c[i] = p % a.sizes[i]
		p /= a.sizes[i]
	}
	return c
}

// position returns the flat row-major position of coordinates c.
func (a Abstract) position(c []int) int {
	p := 0
	for i, s := range a.sizes {
		p = p*s + c[i]
	}
	return p
}
