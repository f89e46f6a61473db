package jnpcore

import (
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// Axes checks dims against the rank of x, an operand of opName (negative dims count from
// the end), and returns them non-negative and ascending; no dims means all of them. An
// out-of-range or repeated dimension records an error wrapping stablehlo.ErrShape.
func Axes(f *stablehlo.Function, opName string, x stablehlo.Value, dims []int) ([]int, bool) {
	r := x.Shape().Rank()
	if len(dims) == 0 {
		all := make([]int, r)
		for i := range all {
			all[i] = i
		}
		return all, true
	}
	out := make([]int, len(dims))
	for i, d := range dims {
		n := d
		if n < 0 {
			n += r
		}
		if n < 0 || n >= r || slices.Contains(out[:i], n) {
			f.Failf(opName, 0, x, stablehlo.ErrShape, "dimension %d out of range or repeated for %v", d, x.Shape())
			return nil, false
		}
		out[i] = n
	}
	slices.Sort(out)
	return out, true
}

// KeptShape returns the dimensions of s with those in dims (ascending) set to 1.
func KeptShape(s stablehlo.Shape, dims []int) []int {
	out := s.Dims()
	for _, d := range dims {
		out[d] = 1
	}
	return out
}

// AccumType is the type jnp accumulates a float sum in: f32 for f16 and bf16, else d.
func AccumType(d stablehlo.DType) stablehlo.DType {
	if d == dtypes.Float16 || d == dtypes.BFloat16 {
		return dtypes.Float32
	}
	return d
}

// ConvertTo converts v to d unless it already has that type.
func ConvertTo(f *stablehlo.Function, v stablehlo.Value, d stablehlo.DType) stablehlo.Value {
	if v.DType() == d {
		return v
	}
	return f.Convert(v, d)
}

// FloatOperand checks the operand x of a float-only helper opName and its dims (see Axes):
// x of another element type records an error wrapping stablehlo.ErrDType.
func FloatOperand(f *stablehlo.Function, opName string, x stablehlo.Value, dims []int) (stablehlo.Value, []int, bool) {
	vs, ok := f.Operands(opName, x)
	if !ok {
		return stablehlo.Value{}, nil, false
	}
	a := vs[0]
	if !a.DType().IsFloat() {
		f.Failf(opName, 0, a, stablehlo.ErrDType, "%s needs a float operand, got %v (convert integers first; jnp gives float32 for them)", opName, a.Shape())
		return stablehlo.Value{}, nil, false
	}
	ax, ok := Axes(f, opName, a, dims)
	return a, ax, ok
}

// Count returns the number of elements of s in dims.
func Count(s stablehlo.Shape, dims []int) int {
	n := 1
	for _, d := range dims {
		n *= s.Dim(d)
	}
	return n
}

// Sum is jnp.sum over dims (ascending, non-negative): f16 and bf16 are summed in f32 and
// converted back, as jnp does.
func Sum(f *stablehlo.Function, x stablehlo.Value, dims []int) stablehlo.Value {
	d := x.DType()
	return ConvertTo(f, f.Reduce(ConvertTo(f, x, AccumType(d)), stablehlo.Sum, dims...), d)
}

// Mean is jnp.mean of float a over dims (ascending), in accumulation type acc, without the
// final conversion. After an error (a is then the zero Value) it returns the zero Value.
func Mean(f *stablehlo.Function, a stablehlo.Value, dims []int, acc stablehlo.DType) stablehlo.Value {
	if !a.Valid() || f.Failed() {
		return stablehlo.Value{}
	}
	s := f.Reduce(ConvertTo(f, a, acc), stablehlo.Sum, dims...)
	return f.Div(s, f.ConstantOf(acc, Count(a.Shape(), dims)))
}
