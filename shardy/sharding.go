package shardy

import (
	"cmp"
	"slices"
	"strings"
)

// Reduction is the pending reduction of a sharding's unreduced axes:
// `unreduced={...}` (sum), `unreduced=max{...}`, `unreduced=min{...}`.
type Reduction uint8

// Reductions. The zero value prints and behaves as ReduceSum.
const (
	ReduceSum Reduction = iota + 1
	ReduceMax
	ReduceMin
)

// String returns "sum", "max" or "min".
func (r Reduction) String() string {
	switch r {
	case ReduceMax:
		return "max"
	case ReduceMin:
		return "min"
	}
	return "sum"
}

// TensorSharding is Shardy's tensor sharding attribute
// `#sdy.sharding<@mesh, [{"x"}, {}], replicated={"y"}>`: a mesh (by symbol
// name or inline), one DimSharding per tensor dimension, and the explicitly
// replicated and unreduced axes.
//
// TensorSharding is an immutable value: the With methods return new values
// and accessors return copies. Construction does not check Shardy's rules;
// Validate and ValidateIn do.
type TensorSharding struct {
	meshName   string
	inline     bool
	mesh       Mesh
	dims       []DimSharding
	replicated []AxisRef
	unreduced  []AxisRef
	reduction  Reduction
}

// NewTensorSharding returns a sharding on the mesh symbol @meshName with
// the given dimension shardings (none for a scalar or a maximal mesh).
func NewTensorSharding(meshName string, dims ...DimSharding) TensorSharding {
	return TensorSharding{meshName: meshName, dims: cloneDims(dims)}
}

// NewInlineTensorSharding returns a sharding whose mesh is written inline:
// `#sdy.sharding<mesh<["x"=2]>, [{"x"}]>`.
func NewInlineTensorSharding(m Mesh, dims ...DimSharding) TensorSharding {
	return TensorSharding{inline: true, mesh: m, dims: cloneDims(dims)}
}

// Replicated returns the fully replicated sharding of a rank-r tensor on
// @meshName: r closed empty dimensions.
func Replicated(meshName string, rank int) TensorSharding {
	return NewTensorSharding(meshName, make([]DimSharding, max(rank, 0))...)
}

func cloneDims(dims []DimSharding) []DimSharding {
	out := make([]DimSharding, len(dims))
	for i, d := range dims {
		out[i] = DimSharding{axes: slices.Clone(d.axes), open: d.open, priority: d.priority, hasPriority: d.hasPriority}
	}
	return out
}

func (s TensorSharding) clone() TensorSharding {
	s.dims = cloneDims(s.dims)
	s.replicated = slices.Clone(s.replicated)
	s.unreduced = slices.Clone(s.unreduced)
	return s
}

// WithReplicated returns s with the explicitly replicated axes set to axes,
// kept in the given order (Shardy requires mesh order; see SortedBy).
func (s TensorSharding) WithReplicated(axes ...AxisRef) TensorSharding {
	s = s.clone()
	s.replicated = slices.Clone(axes)
	if len(s.replicated) == 0 {
		s.replicated = nil
	}
	return s
}

// WithUnreduced returns s with the unreduced axes set to axes (kept in the
// given order) pending reduction r.
func (s TensorSharding) WithUnreduced(r Reduction, axes ...AxisRef) TensorSharding {
	s = s.clone()
	s.unreduced = slices.Clone(axes)
	if len(s.unreduced) == 0 {
		s.unreduced = nil
	}
	s.reduction = r
	return s
}

// WithMeshName returns s referring to the mesh symbol @name (dropping an
// inline mesh).
func (s TensorSharding) WithMeshName(name string) TensorSharding {
	s = s.clone()
	s.meshName, s.inline, s.mesh = name, false, Mesh{}
	return s
}

// WithDims returns s with new dimension shardings.
func (s TensorSharding) WithDims(dims ...DimSharding) TensorSharding {
	s = s.clone()
	s.dims = cloneDims(dims)
	return s
}

// SortedBy returns s with its replicated and unreduced axes sorted in the
// order of mesh m (axis position, then sub-axis pre-size), as Shardy
// requires. Axes m lacks sort last, by name.
func (s TensorSharding) SortedBy(m Mesh) TensorSharding {
	s = s.clone()
	sortRefs(s.replicated, m)
	sortRefs(s.unreduced, m)
	return s
}

func sortRefs(refs []AxisRef, m Mesh) {
	slices.SortStableFunc(refs, func(a, b AxisRef) int { return compareRefs(a, b, m) })
}

// compareRefs orders axis refs by mesh position, then pre-size, then size;
// a whole axis sorts before its sub-axes. Unknown axes sort last by name.
func compareRefs(a, b AxisRef, m Mesh) int {
	ia, ib := m.AxisIndex(a.name), m.AxisIndex(b.name)
	if ia < 0 {
		ia = len(m.axes)
	}
	if ib < 0 {
		ib = len(m.axes)
	}
	if c := cmp.Compare(ia, ib); c != 0 {
		return c
	}
	if c := cmp.Compare(a.name, b.name); c != 0 {
		return c
	}
	if a.sub != b.sub {
		if !a.sub {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(a.preSize, b.preSize); c != 0 {
		return c
	}
	return cmp.Compare(a.size, b.size)
}

// MeshName returns the mesh symbol name (without '@'), or "" for an inline mesh.
func (s TensorSharding) MeshName() string { return s.meshName }

// InlineMesh returns the inline mesh and true, or false when s refers to a
// mesh symbol.
func (s TensorSharding) InlineMesh() (Mesh, bool) { return s.mesh, s.inline }

// Rank returns the number of dimension shardings.
func (s TensorSharding) Rank() int { return len(s.dims) }

// Dims returns a copy of the dimension shardings.
func (s TensorSharding) Dims() []DimSharding { return cloneDims(s.dims) }

// Dim returns the sharding of dimension i; out of range gives a closed `{}`.
func (s TensorSharding) Dim(i int) DimSharding {
	if i < 0 || i >= len(s.dims) {
		return DimSharding{}
	}
	return cloneDims(s.dims[i : i+1])[0]
}

// Replicated returns a copy of the explicitly replicated axes.
func (s TensorSharding) Replicated() []AxisRef { return slices.Clone(s.replicated) }

// Unreduced returns a copy of the unreduced axes.
func (s TensorSharding) Unreduced() []AxisRef { return slices.Clone(s.unreduced) }

// Reduction returns the pending reduction of the unreduced axes (ReduceSum
// by default).
func (s TensorSharding) Reduction() Reduction {
	if s.reduction == 0 {
		return ReduceSum
	}
	return s.reduction
}

// IsFullyReplicated reports whether no dimension is sharded and no axis is
// unreduced.
func (s TensorSharding) IsFullyReplicated() bool {
	for _, d := range s.dims {
		if len(d.axes) > 0 {
			return false
		}
	}
	return len(s.unreduced) == 0
}

// Equal reports whether s and o are the same attribute (same text).
func (s TensorSharding) Equal(o TensorSharding) bool {
	if s.meshName != o.meshName || s.inline != o.inline || !s.mesh.Equal(o.mesh) ||
		!slices.Equal(s.replicated, o.replicated) || !slices.Equal(s.unreduced, o.unreduced) ||
		len(s.dims) != len(o.dims) {
		return false
	}
	if len(s.unreduced) > 0 && s.Reduction() != o.Reduction() {
		return false
	}
	for i := range s.dims {
		if !s.dims[i].Equal(o.dims[i]) {
			return false
		}
	}
	return true
}

// String returns the attribute text: `#sdy.sharding<@mesh, [{"x"}, {}]>`.
func (s TensorSharding) String() string { return pretty(shardingAttrPrefix, s) }

// Stripped returns the text without the `#sdy.sharding` prefix, as used in
// sharding_per_value, sharding_constraint and manual_computation:
// `<@mesh, [{"x"}, {}]>`.
func (s TensorSharding) Stripped() string {
	var b strings.Builder
	s.writeTo(&b)
	return b.String()
}

func (s TensorSharding) writeTo(b *strings.Builder) {
	b.WriteByte('<')
	if s.inline {
		b.WriteString("mesh")
		s.mesh.writeTo(b)
	} else {
		writeSymbol(b, s.meshName)
	}
	b.WriteString(", [")
	for i, d := range s.dims {
		if i > 0 {
			b.WriteString(", ")
		}
		d.writeTo(b)
	}
	b.WriteByte(']')
	if len(s.replicated) > 0 {
		b.WriteString(", replicated=")
		writeAxisList(b, s.replicated)
	}
	if len(s.unreduced) > 0 {
		b.WriteString(", unreduced=")
		switch s.reduction {
		case ReduceMax, ReduceMin:
			b.WriteString(s.reduction.String())
		}
		writeAxisList(b, s.unreduced)
	}
	b.WriteByte('>')
}

// TensorShardingPerValue is `#sdy.sharding_per_value<[<@mesh, [...]>, ...]>`,
// the sharding attribute of an op: one stripped sharding per result.
type TensorShardingPerValue struct {
	shardings []TensorSharding
}

// NewTensorShardingPerValue returns the per-value sharding of the given
// shardings, one per op result.
func NewTensorShardingPerValue(shardings ...TensorSharding) TensorShardingPerValue {
	out := make([]TensorSharding, len(shardings))
	for i, s := range shardings {
		out[i] = s.clone()
	}
	return TensorShardingPerValue{shardings: out}
}

// Len returns the number of shardings.
func (p TensorShardingPerValue) Len() int { return len(p.shardings) }

// Shardings returns a copy of the shardings.
func (p TensorShardingPerValue) Shardings() []TensorSharding {
	return NewTensorShardingPerValue(p.shardings...).shardings
}

// Sharding returns sharding i (the zero TensorSharding when out of range).
func (p TensorShardingPerValue) Sharding(i int) TensorSharding {
	if i < 0 || i >= len(p.shardings) {
		return TensorSharding{}
	}
	return p.shardings[i].clone()
}

// Equal reports whether p and o hold equal shardings.
func (p TensorShardingPerValue) Equal(o TensorShardingPerValue) bool {
	return slices.EqualFunc(p.shardings, o.shardings, TensorSharding.Equal)
}

// String returns `#sdy.sharding_per_value<[<@mesh, [{"x"}]>, ...]>`.
func (p TensorShardingPerValue) String() string { return pretty(perValueAttrPrefix, p) }

func (p TensorShardingPerValue) writeTo(b *strings.Builder) {
	b.WriteString("<[")
	for i, s := range p.shardings {
		if i > 0 {
			b.WriteString(", ")
		}
		s.writeTo(b)
	}
	b.WriteString("]>")
}

// ManualAxes is the `manual_axes={"x", "y"}` list of sdy.manual_computation:
// whole mesh axis names.
type ManualAxes struct {
	names []string
}

// NewManualAxes returns the manual axes list of names, in the given order
// (JAX writes mesh order; see SortedBy).
func NewManualAxes(names ...string) ManualAxes {
	return ManualAxes{names: slices.Clone(names)}
}

// Names returns a copy of the axis names.
func (a ManualAxes) Names() []string { return slices.Clone(a.names) }

// Len returns the number of manual axes.
func (a ManualAxes) Len() int { return len(a.names) }

// Contains reports whether name is a manual axis.
func (a ManualAxes) Contains(name string) bool { return slices.Contains(a.names, name) }

// SortedBy returns the axes sorted in the order of mesh m (unknown names last).
func (a ManualAxes) SortedBy(m Mesh) ManualAxes {
	names := slices.Clone(a.names)
	slices.SortStableFunc(names, func(x, y string) int { return compareRefs(Axis(x), Axis(y), m) })
	return ManualAxes{names: names}
}

// Equal reports whether a and o list the same names in the same order.
func (a ManualAxes) Equal(o ManualAxes) bool { return slices.Equal(a.names, o.names) }

// String returns `{"x", "y"}` (or `{}`).
func (a ManualAxes) String() string {
	var b strings.Builder
	a.writeTo(&b)
	return b.String()
}

func (a ManualAxes) writeTo(b *strings.Builder) {
	b.WriteByte('{')
	for i, n := range a.names {
		if i > 0 {
			b.WriteString(", ")
		}
		writeQuoted(b, n)
	}
	b.WriteByte('}')
}
