package mesh

import (
	"fmt"
	"iter"
	"slices"
	"strings"
)

type dimKind uint8

const (
	dimReplicated dimKind = iota
	dimSharded
	dimUnconstrained
	dimInvalid
)

// Dim is one PartitionSpec entry: replicated (None), one mesh axis, an
// ordered tuple of mesh axes (the first is major), or Unconstrained. Dim is
// a comparable value; the zero Dim is None.
type Dim struct {
	kind dimKind
	axes string // sharded: axis names joined by NUL; invalid: the reason
}

// None is a replicated dimension (JAX's None in a PartitionSpec).
var None = Dim{}

// Unconstrained leaves a dimension's sharding to the compiler (JAX's
// P.UNCONSTRAINED). It is allowed only on meshes with an Auto axis. Shard
// geometry (ShardShape, DevicesIndicesMap, ...) reads it as None,
// replicated, as JAX's shard_shape and devices_indices_map do.
var Unconstrained = Dim{kind: dimUnconstrained}

// Axes returns a dimension sharded over the named mesh axes, the first
// major. Axes() is None and Axes("x") is the single axis "x" (JAX's
// canonical form). An empty name or one holding a NUL byte gives an invalid
// Dim, which makes the PartitionSpec using it carry an error.
func Axes(names ...string) Dim {
	if len(names) == 0 {
		return None
	}
	for i, n := range names {
		if n == "" {
			return Dim{kind: dimInvalid, axes: fmt.Sprintf("empty axis name at tuple position %d of %s", i, pyStrTuple(names))}
		}
		if strings.IndexByte(n, 0) >= 0 {
			return Dim{kind: dimInvalid, axes: fmt.Sprintf("axis name %q contains a NUL byte", n)}
		}
	}
	return Dim{kind: dimSharded, axes: strings.Join(names, "\x00")}
}

// Axes returns the mesh axes of the dimension, major first; nil for None,
// Unconstrained and invalid dims.
func (d Dim) Axes() []string {
	if d.kind != dimSharded {
		return nil
	}
	return strings.Split(d.axes, "\x00")
}

// axisNames yields the mesh axes of the dimension, major first, as Axes
// returns them but without allocating.
func (d Dim) axisNames() iter.Seq[string] {
	return func(yield func(string) bool) {
		if d.kind != dimSharded {
			return
		}
		rest := d.axes
		for {
			i := strings.IndexByte(rest, 0)
			if i < 0 {
				yield(rest)
				return
			}
			if !yield(rest[:i]) {
				return
			}
			rest = rest[i+1:]
		}
	}
}

// IsReplicated reports whether d is None.
func (d Dim) IsReplicated() bool { return d.kind == dimReplicated }

// IsUnconstrained reports whether d is Unconstrained.
func (d Dim) IsUnconstrained() bool { return d.kind == dimUnconstrained }

// Err returns why d is invalid, wrapping ErrInvalidSpec, or nil.
func (d Dim) Err() error {
	if d.kind == dimInvalid {
		return fmt.Errorf("mesh: %w: %s", ErrInvalidSpec, d.axes)
	}
	return nil
}

// String returns JAX's form of the entry: None, 'x', ('x', 'y') or
// UNCONSTRAINED.
func (d Dim) String() string {
	switch d.kind {
	case dimReplicated:
		return "None"
	case dimUnconstrained:
		return "UNCONSTRAINED"
	case dimInvalid:
		return "<invalid>"
	}
	axes := d.Axes()
	if len(axes) == 1 {
		return pyQuote(axes[0])
	}
	return pyStrTuple(axes)
}

// PartitionSpec says, per array dimension, which mesh axes split it (JAX's
// PartitionSpec). Dimensions past Len are replicated. It is an immutable
// value; a spec built from bad entries carries an error (Err) that every
// sharding built from it returns.
type PartitionSpec struct {
	dims []Dim
	err  error
}

// P builds a PartitionSpec from entries, one per array dimension:
//
//   - nil, "" or an empty []string: None (replicated)
//   - a string: that mesh axis
//   - a []string: the axes as a tuple, first major (a 1-element tuple is its
//     axis)
//   - a Dim: None, Unconstrained or Axes(...)
//
// Any other entry (a nested tuple, a number, ...) makes the spec carry an
// error wrapping ErrInvalidSpec, returned by Err and by NewNamedSharding.
func P(entries ...any) PartitionSpec {
	s := PartitionSpec{dims: make([]Dim, len(entries))}
	for i, e := range entries {
		var d Dim
		switch v := e.(type) {
		case nil:
			d = None
		case string:
			if v != "" {
				d = Axes(v)
			}
		case []string:
			d = Axes(v...)
		case Dim:
			d = v
		case []any:
			names := make([]string, len(v))
			for j, x := range v {
				n, ok := x.(string)
				if !ok {
					if s.err == nil {
						s.err = fmt.Errorf("mesh: %w: entry %d: a tuple inside PartitionSpec cannot contain %T (nested tuples are not allowed)", ErrInvalidSpec, i, x)
					}
					break
				}
				names[j] = n
			}
			d = Axes(names...)
		default:
			if s.err == nil {
				s.err = fmt.Errorf("mesh: %w: entry %d has unsupported type %T, want nil, string, []string or Dim", ErrInvalidSpec, i, e)
			}
		}
		if err := d.Err(); err != nil && s.err == nil {
			s.err = fmt.Errorf("mesh: %w: entry %d: %s", ErrInvalidSpec, i, d.axes)
		}
		s.dims[i] = d
	}
	return s
}

// NewSpec is P returning the spec's error directly.
func NewSpec(entries ...any) (PartitionSpec, error) {
	s := P(entries...)
	return s, s.err
}

// SpecOf builds a PartitionSpec from Dims.
func SpecOf(dims ...Dim) PartitionSpec {
	entries := make([]any, len(dims))
	for i, d := range dims {
		entries[i] = d
	}
	return P(entries...)
}

// Len returns the number of entries.
func (s PartitionSpec) Len() int { return len(s.dims) }

// Dim returns entry i, or None when i is out of range (trailing dims are
// replicated).
func (s PartitionSpec) Dim(i int) Dim {
	if i < 0 || i >= len(s.dims) {
		return None
	}
	return s.dims[i]
}

// Dims returns a copy of the entries.
func (s PartitionSpec) Dims() []Dim { return slices.Clone(s.dims) }

// Err returns the construction error, wrapping ErrInvalidSpec, or nil.
func (s PartitionSpec) Err() error { return s.err }

// UsedAxes returns the mesh axes named by the spec, in entry order.
func (s PartitionSpec) UsedAxes() []string {
	var out []string
	for _, d := range s.dims {
		out = append(out, d.Axes()...)
	}
	return out
}

// appendAxes appends the mesh axes named by the spec, in entry order, to out
// (UsedAxes without its allocations when out has room).
func (s PartitionSpec) appendAxes(out []string) []string {
	for _, d := range s.dims {
		for n := range d.axisNames() {
			out = append(out, n)
		}
	}
	return out
}

// Equal reports whether s and t have the same entries (P('x') and
// P('x', None) differ, as in JAX) and the same validity.
func (s PartitionSpec) Equal(t PartitionSpec) bool {
	if (s.err == nil) != (t.err == nil) {
		return false
	}
	if s.err != nil && s.err.Error() != t.err.Error() {
		return false
	}
	return slices.Equal(s.dims, t.dims)
}

// String returns JAX's form: P(), P('x',), P('x', None, ('x', 'y')).
func (s PartitionSpec) String() string {
	var b strings.Builder
	b.WriteString("P(")
	for i, d := range s.dims {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.String())
	}
	if len(s.dims) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}
