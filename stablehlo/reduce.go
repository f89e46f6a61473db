package stablehlo

import (
	"github.com/gomlx/gopjrt/dtypes"
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

// init returns the identity of r for element type d.
func (r Reduction) init(d DType) lit {
	switch r {
	case Sum:
		return lit{kind: 'i', i: 0}
	case Prod:
		return lit{kind: 'i', i: 1}
	}
	lowest := r == Max
	switch {
	case d.IsFloat():
		if lowest {
			return lit{kind: 'f', f: math.Inf(-1)}
		}
		return lit{kind: 'f', f: math.Inf(1)}
	case signed(d):
		if lowest {
			return lit{kind: 'i', i: -1 << (d.Bits() - 1)}
		}
		return lit{kind: 'i', i: 1<<(d.Bits()-1) - 1}
	default:
		if lowest {
			return lit{kind: 'u', u: 0}
		}
		return lit{kind: 'u', u: math.MaxUint64 >> (64 - d.Bits())}
	}
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
