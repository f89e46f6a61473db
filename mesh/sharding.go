package mesh

import (
	"fmt"
	"slices"
	"strings"
)

// NamedSharding says how an array is laid out over a mesh: spec entry d
// splits array dimension d over the named mesh axes (JAX's NamedSharding).
// It may be built over a concrete Mesh (NewNamedSharding) or an Abstract
// mesh (NewAbstractSharding); queries that need devices return an error
// wrapping ErrNoDevices on the latter. NamedSharding is an immutable value,
// safe for concurrent use. The zero NamedSharding is invalid: its methods
// return errors wrapping ErrInvalidMesh.
type NamedSharding struct {
	abs     Abstract
	mesh    Mesh // zero when abstract
	devices bool
	spec    PartitionSpec
	dimAxes [][]int // per spec dim: mesh axis positions, major first
	tile    []int   // per spec dim: number of partitions
	used    []bool  // per mesh axis: named by the spec
	memory  string  // memory kind; "" for the default (concrete) or none (abstract)
	key     string
}

// NewNamedSharding validates spec against m in JAX's order and returns the
// sharding. Errors: the spec's own error (ErrInvalidSpec); ErrInvalidMesh
// for an empty mesh; *DuplicateAxisError (ErrDuplicateAxis) when an axis is
// used twice; *UnknownAxisError (ErrUnknownAxis) for an axis not in m;
// ErrUnconstrained for Unconstrained when no axis is Auto. A spec longer
// than an array's rank is not an error here; CheckShape reports it.
func NewNamedSharding(m Mesh, spec PartitionSpec) (NamedSharding, error) {
	s, err := newSharding(m.abs, spec)
	if err != nil {
		return NamedSharding{}, err
	}
	s.mesh = m
	s.devices = true
	s.key = shardingKey("", m.key, spec)
	return s, nil
}

// MustNamedSharding is NewNamedSharding that panics on error, for tests and
// package variables.
func MustNamedSharding(m Mesh, spec PartitionSpec) NamedSharding {
	s, err := NewNamedSharding(m, spec)
	if err != nil {
		panic(err)
	}
	return s
}

// NewAbstractSharding is NewNamedSharding over an abstract mesh (no
// devices), with the same validation.
func NewAbstractSharding(a Abstract, spec PartitionSpec) (NamedSharding, error) {
	s, err := newSharding(a, spec)
	if err != nil {
		return NamedSharding{}, err
	}
	s.key = shardingKey("abstract|", a.key, spec)
	return s, nil
}

func newSharding(a Abstract, spec PartitionSpec) (NamedSharding, error) {
	if err := spec.Err(); err != nil {
		return NamedSharding{}, err
	}
	if a.Empty() {
		return NamedSharding{}, fmt.Errorf("mesh: %w: NamedSharding needs a non-empty mesh, got %s with spec %s", ErrInvalidMesh, a.body(), spec)
	}
	// 1. Duplicate axes, across dims or inside a tuple.
	var buf [8]string
	used := spec.appendAxes(buf[:0])
	var dups []string
	for i, n := range used {
		if slices.Contains(used[:i], n) && !slices.Contains(dups, n) {
			dups = append(dups, n)
		}
	}
	if len(dups) > 0 {
		slices.Sort(dups)
		return NamedSharding{}, &DuplicateAxisError{Spec: spec, Axes: dups}
	}
	// 2. Unknown axes.
	s := NamedSharding{abs: a, spec: spec, used: make([]bool, a.NumAxes())}
	s.dimAxes = make([][]int, spec.Len())
	s.tile = make([]int, spec.Len())
	positions := make([]int, len(used)) // one backing array for every dim's axis positions
	hasUnconstrained := false
	k := 0
	for d, dim := range spec.dims {
		s.tile[d] = 1
		if dim.IsUnconstrained() {
			hasUnconstrained = true
		}
		start := k
		for n := range dim.axisNames() {
			i := a.AxisIndex(n)
			if i < 0 {
				return NamedSharding{}, &UnknownAxisError{Spec: spec, Dim: d, Axis: n, MeshAxes: a.AxisNames()}
			}
			positions[k] = i
			k++
			s.tile[d] *= a.sizes[i]
			s.used[i] = true
		}
		if k > start {
			s.dimAxes[d] = positions[start:k:k]
		}
	}
	// 3. Unconstrained needs an Auto axis.
	if hasUnconstrained && !slices.Contains(a.types, Auto) {
		return NamedSharding{}, fmt.Errorf("mesh: %w: %s cannot contain UNCONSTRAINED when no mesh axis types are Auto, got axis types %v for mesh axes %s",
			ErrUnconstrained, spec, a.types, pyStrTuple(a.names))
	}
	return s, nil
}

// shardingKey returns prefix + meshKey + "|" + a canonical text of spec's entries: each a kind
// byte and its axis names, NUL-separated as Dim keeps them, ended by \x01. Equal specs (and only
// they) give equal text; it is built in one allocation, with no String of the spec.
func shardingKey(prefix, meshKey string, spec PartitionSpec) string {
	n := len(prefix) + len(meshKey) + 1
	for _, d := range spec.dims {
		n += 2 + len(d.axes)
	}
	b := make([]byte, 0, n)
	b = append(b, prefix...)
	b = append(b, meshKey...)
	b = append(b, '|')
	for _, d := range spec.dims {
		b = append(b, '0'+byte(d.kind))
		b = append(b, d.axes...)
		b = append(b, 1)
	}
	return string(b)
}

func (s NamedSharding) valid() error {
	if s.key == "" {
		return fmt.Errorf("mesh: %w: zero NamedSharding (use NewNamedSharding)", ErrInvalidMesh)
	}
	return nil
}

// Abstract returns the sharding's abstract mesh.
func (s NamedSharding) Abstract() Abstract { return s.abs }

// Mesh returns the sharding's mesh, or an error wrapping ErrNoDevices when
// the sharding is abstract.
func (s NamedSharding) Mesh() (Mesh, error) {
	if err := s.valid(); err != nil {
		return Mesh{}, err
	}
	if !s.devices {
		return Mesh{}, fmt.Errorf("mesh: %w: sharding %s is over an abstract mesh", ErrNoDevices, s)
	}
	return s.mesh, nil
}

// HasDevices reports whether the sharding is over a concrete Mesh.
func (s NamedSharding) HasDevices() bool { return s.devices }

// Spec returns the partition spec.
func (s NamedSharding) Spec() PartitionSpec { return s.spec }

// IsFullyReplicated reports whether every device holds the whole array: the
// mesh has one device, or the axes the spec names have a size product of 1.
// It is false for the zero NamedSharding.
func (s NamedSharding) IsFullyReplicated() bool {
	return s.key != "" && s.NumShards() == 1
}

// NumShards returns the number of distinct shards (the product of the sizes
// of the axes the spec names), or 0 for the zero NamedSharding.
func (s NamedSharding) NumShards() int {
	if s.key == "" {
		return 0
	}
	n := 1
	for i, u := range s.used {
		if u {
			n *= s.abs.sizes[i]
		}
	}
	return n
}

// Tiling returns the number of partitions of each of the first rank array
// dimensions (1 for replicated ones).
func (s NamedSharding) Tiling(rank int) []int {
	out := make([]int, max(rank, 0))
	for d := range out {
		out[d] = 1
		if d < len(s.tile) {
			out[d] = s.tile[d]
		}
	}
	return out
}

// Equal reports whether s and o have equal meshes (devices included), equal
// specs and equal memory kinds.
func (s NamedSharding) Equal(o NamedSharding) bool { return s.key == o.key }

// Key returns a canonical string of the mesh, spec and memory kind; equal
// shardings have equal keys.
func (s NamedSharding) Key() string { return s.key }

// String returns JAX's repr, NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, Auto)),
// spec=P('x',), memory_kind=device): the mesh as Mesh.String (AbstractMesh(...) for an abstract
// sharding), the spec as PartitionSpec.String and the memory kind, which an abstract sharding
// made without one does not print.
func (s NamedSharding) String() string {
	var b strings.Builder
	b.WriteString("NamedSharding(mesh=")
	if !s.devices {
		b.WriteString("Abstract")
	}
	b.WriteString(s.abs.body())
	b.WriteString(", spec=")
	b.WriteString(s.spec.String())
	if k := s.MemoryKind(); k != "" {
		b.WriteString(", memory_kind=")
		b.WriteString(k)
	}
	b.WriteByte(')')
	return b.String()
}
