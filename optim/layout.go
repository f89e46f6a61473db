package optim

import (
	"fmt"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/shapes"
)

// LeafKind says how a state leaf's shape derives from its parameter's. The zero value is
// invalid.
type LeafKind uint8

const (
	// Count is an int32 scalar step count, of no parameter.
	Count LeafKind = iota + 1
	// Like has its parameter's shape: a moment, a trace, an unfactored second moment.
	Like
	// Row is a factored second moment (optax's v_row): the parameter's shape without
	// dimension Leaf.Dim, the largest one, which it is averaged over.
	Row
	// Col is a factored second moment (optax's v_col): the parameter's shape without
	// dimension Leaf.Dim, the second largest one.
	Col
	// Dummy is a placeholder of shape (1,) that optax keeps for a parameter in a slot it
	// does not use (v_row and v_col of an unfactored parameter, v of a factored one); it
	// is always zero.
	Dummy
)

var leafKindNames = [...]string{Count: "Count", Like: "Like", Row: "Row", Col: "Col", Dummy: "Dummy"}

// String returns the kind's name: Count, Like, Row, Col or Dummy.
func (k LeafKind) String() string {
	if k == 0 || int(k) >= len(leafKindNames) {
		return fmt.Sprintf("LeafKind(%d)", uint8(k))
	}
	return leafKindNames[k]
}

// Leaf describes one leaf of a Transformation's state (see Transformation.Layout).
type Leaf struct {
	// Kind says how the leaf's shape derives from its parameter's.
	Kind LeafKind
	// Param is the index of the parameter the leaf belongs to; -1 for a Count.
	Param int
	// Dim is, for Row and Col, the dimension of the parameter that the leaf lacks; -1 for
	// the other kinds.
	Dim int
	// Shape is the leaf's shape and element type: int32[] for a Count, the parameter's
	// element type (or an accumulator type the transformation names) for the others.
	Shape shapes.Shape
}

// String returns the leaf in a short form: Count, Like(0), Row(0, -dim 1), Dummy(2).
func (l Leaf) String() string {
	switch l.Kind {
	case Count:
		return "Count"
	case Row, Col:
		return fmt.Sprintf("%s(%d, -dim %d)", l.Kind, l.Param, l.Dim)
	}
	return fmt.Sprintf("%s(%d)", l.Kind, l.Param)
}

// countLeaf is the Leaf of a step count.
func countLeaf() Leaf { return Leaf{Kind: Count, Param: -1, Dim: -1, Shape: shapes.Make(dtypes.Int32)} }

// likeLeaves are the Like leaves of params, one per parameter.
func likeLeaves(params []shapes.Shape) []Leaf {
	l := make([]Leaf, len(params))
	for i, p := range params {
		l[i] = Leaf{Kind: Like, Param: i, Dim: -1, Shape: p}
	}
	return l
}

// dummyLeaf is the Dummy leaf of parameter i of shape p.
func dummyLeaf(i int, p shapes.Shape) Leaf {
	return Leaf{Kind: Dummy, Param: i, Dim: -1, Shape: shapes.Make(p.DType(), 1)}
}

// reducedLeaf is the Row or Col leaf of parameter i of shape p, without dimension d.
func reducedLeaf(k LeafKind, i int, p shapes.Shape, d int) Leaf {
	dims := p.Dims()
	return Leaf{Kind: k, Param: i, Dim: d, Shape: shapes.Make(p.DType(), slices.Delete(dims, d, d+1)...)}
}

// StateSpecs returns the partition spec of each leaf of t's state for parameters of the
// given shapes laid out by specs (one per parameter), so that an optimizer's state is
// sharded as its parameters are (with FSDP, sharded too): a Like leaf takes its parameter's
// spec, a Row or Col leaf that spec without the entry of the dimension it lacks, and step
// counts and Dummy leaves are replicated, P(). Lists of different lengths give an error
// wrapping ErrLength, a spec with more entries than its parameter has dimensions one
// wrapping ErrShape, and a spec that carries an error (mesh.PartitionSpec.Err) that error.
func StateSpecs(t Transformation, params []shapes.Shape, specs []mesh.PartitionSpec) ([]mesh.PartitionSpec, error) {
	if len(specs) != len(params) {
		return nil, fmt.Errorf("optim: state specs: %w: %d specs for %d parameters", ErrLength, len(specs), len(params))
	}
	for i, s := range specs {
		if err := s.Err(); err != nil {
			return nil, fmt.Errorf("optim: state specs: parameter %d: %w", i, err)
		}
		if s.Len() > params[i].Rank() {
			return nil, fmt.Errorf("optim: state specs: %w: spec %v of parameter %d has %d entries for %d dimensions (%s)",
				ErrShape, s, i, s.Len(), params[i].Rank(), params[i])
		}
	}
	layout := t.Layout(params)
	out := make([]mesh.PartitionSpec, len(layout))
	for k, l := range layout {
		switch l.Kind {
		case Like:
			out[k] = specs[l.Param]
		case Row, Col:
			out[k] = withoutDim(specs[l.Param], l.Dim)
		default:
			out[k] = mesh.P()
		}
	}
	return out, nil
}

// withoutDim returns s without the entry of dimension d (s itself when d is past its
// entries, which are replicated).
func withoutDim(s mesh.PartitionSpec, d int) mesh.PartitionSpec {
	if d >= s.Len() {
		return s
	}
	dims := s.Dims()
	return mesh.SpecOf(slices.Delete(dims, d, d+1)...)
}
