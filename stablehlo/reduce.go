package stablehlo

import (
	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
	"math"
	"slices"
	"strconv"
)

// Reduction is the combining function of a reduce or a collective.
type Reduction uint8

// Reductions.
const (
	Sum  Reduction = iota + 1 // stablehlo.add, init 0
	Prod                      // stablehlo.multiply, init 1
	Max                       // stablehlo.maximum, init -inf (lowest integer)
	Min                       // stablehlo.minimum, init +inf (highest integer)
)

// String returns "Sum", "Prod", "Max" or "Min".
func (r Reduction) String() string {
	if r >= Sum && r <= Min {
		return [...]string{"", "Sum", "Prod", "Max", "Min"}[r]
	}
	return "Reduction(" + strconv.Itoa(int(r)) + ")"
}

func (r Reduction) op() string {
	return [...]string{"", "stablehlo.add", "stablehlo.multiply", "stablehlo.maximum", "stablehlo.minimum"}[r]
}

// init returns the identity of r for element type d; a literal of kind 'x', which no type
// formats (ErrDType), where d has none the builder writes: Max and Min of complex values, of
// the float8 family and f4E2M1FN (without infinities, or with their own NaN encodings), and
// Sum of f8E8M0FNU (which has no zero).
func (r Reduction) init(d DType) lit {
	switch r {
	case Sum:
		if d == dtypes.F8E8M0FNU {
			return lit{kind: 'x'}
		}
		return lit{kind: 'i', i: 0}
	case Prod:
		return lit{kind: 'i', i: 1}
	}
	lowest := r == Max
	bits := shapes.Bits(d)
	switch {
	case wideFloat(d):
		if lowest {
			return lit{kind: 'f', f: math.Inf(-1)}
		}
		return lit{kind: 'f', f: math.Inf(1)}
	case signed(d):
		if lowest {
			return lit{kind: 'i', i: -1 << (bits - 1)}
		}
		return lit{kind: 'i', i: 1<<(bits-1) - 1}
	case shapes.IsUnsigned(d):
		if lowest {
			return lit{kind: 'u', u: 0}
		}
		return lit{kind: 'u', u: math.MaxUint64 >> (64 - bits)}
	case d == dtypes.Bool:
		return lit{kind: 'b', b: !lowest}
	}
	return lit{kind: 'x'}
}

// ReduceParams are the parameters of stablehlo.reduce; its operands are the reduced
// tensor and the scalar initial value (r's identity), and its one region applies Reduction
// to two scalars.
type ReduceParams struct {
	Reduction Reduction
	Dims      []int // reduced dimensions, ascending
}

// Properties returns "dimensions = array<i64: ...>".
func (p ReduceParams) Properties() string { return "dimensions = " + i64Array(p.Dims) }

// Reduce reduces x over dims with r, starting from r's identity (0 for Sum, 1 for Prod,
// -inf or the lowest integer for Max, +inf or the highest integer for Min). Params:
// ReduceParams.
func (f *Function) Reduce(x Value, r Reduction, dims ...int) Value {
	const opName = "reduce"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	if r < Sum || r > Min {
		f.failf(opName, -1, nil, ErrDType, "invalid reduction %v", r)
		return Value{}
	}
	if a.shape.DType() == dtypes.Bool {
		f.failf(opName, 0, a, ErrDType, "%v of pred", r)
		return Value{}
	}
	reduced := make([]bool, a.shape.Rank())
	for _, d := range dims {
		if d < 0 || d >= len(reduced) || reduced[d] {
			f.failf(opName, 0, a, ErrShape, "dimension %d out of range or repeated for %v", d, a.shape)
			return Value{}
		}
		reduced[d] = true
	}
	var out []int
	for i, d := range a.shape.Dims() {
		if !reduced[i] {
			out = append(out, d)
		}
	}
	init := f.constant(opName, scalarOf(a.shape), []lit{r.init(a.shape.DType())})
	if init.v == nil {
		return Value{}
	}
	sorted := slices.Clone(dims)
	slices.Sort(sorted)
	o := &Op{name: "stablehlo.reduce", operands: []*value{a, init.v}, params: ReduceParams{Reduction: r, Dims: sorted},
		regions: []*Function{f.scalarRegion(r, a.shape.DType())}}
	return f.emitMulti(o, []Shape{NewShape(a.shape.DType(), out...)})[0]
}

// Sum returns the sum of x over dims (all dimensions when none are given).
func (f *Function) Sum(x Value, dims ...int) Value { return f.Reduce(x, Sum, allDims(x, dims)...) }

// ReduceMax returns the maximum of x over dims (all dimensions when none are given).
func (f *Function) ReduceMax(x Value, dims ...int) Value {
	return f.Reduce(x, Max, allDims(x, dims)...)
}

// ReduceMin returns the minimum of x over dims (all dimensions when none are given).
func (f *Function) ReduceMin(x Value, dims ...int) Value {
	return f.Reduce(x, Min, allDims(x, dims)...)
}

func allDims(x Value, dims []int) []int {
	if len(dims) > 0 || x.v == nil {
		return dims
	}
	all := make([]int, x.v.shape.Rank())
	for i := range all {
		all[i] = i
	}
	return all
}
