package stablehlo

import (
	"fmt"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"
)

// NumPy-style helpers: broadcasting, reductions that keep their dimensions, mean and
// variance. They are built from the builder's ops (broadcast_in_dim, reduce, reshape,
// convert, ...), so a pass over Function.Ops sees only those.
//
// Binary and ternary elementwise ops (Add, Mul, Compare, Select, Clamp, ...) broadcast
// their operands with NumPy's rule themselves, emitting stablehlo.broadcast_in_dim for each
// operand whose shape differs from the result's; Broadcast2 and BroadcastArrays apply the
// same rule on their own:
//
//	z := f.Add(x, y) // f32[4, 1, 3] + f32[5, 1] -> f32[4, 5, 3]
//
// Where these helpers take dimensions, a negative one counts from the end (-1 is the last),
// as NumPy's axis arguments do; out-of-range or repeated dimensions are errors wrapping
// ErrShape.

// BroadcastShapes returns the shape that arrays of the given dimensions broadcast to under
// NumPy's rule: dimensions align at the end, and each pair is equal or one of them is 1.
// Incompatible dimensions give an error wrapping ErrShape that names them.
func BroadcastShapes(shapes ...[]int) ([]int, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := slices.Repeat([]int{1}, rank)
	for i := range rank {
		for _, s := range shapes {
			j := len(s) - rank + i
			if j < 0 {
				continue
			}
			switch d := s[j]; {
			case d == out[i] || d == 1:
			case out[i] == 1:
				out[i] = d
			default:
				return nil, fmt.Errorf("%w: shapes %v cannot be broadcast together: dimension %d (from the end) is %d in one and %d in another",
					ErrShape, shapes, i-rank, out[i], d)
			}
		}
	}
	return out, nil
}

// Broadcast2 broadcasts x and y to their common shape under NumPy's rule (see
// BroadcastShapes) and returns them, so that a binary op of different shapes reads
// f.Mul(f.Broadcast2(x, y)). Only shapes change: element types must still agree when the
// op uses them. A weak constant (see Constant) is returned unchanged, since binary ops
// broadcast it themselves. After an error both results are the zero Value.
func (f *Function) Broadcast2(x, y Value) (Value, Value) {
	out := f.BroadcastArrays(x, y)
	if len(out) != 2 {
		return Value{}, Value{}
	}
	return out[0], out[1]
}

// BroadcastArrays broadcasts every value to their common shape under NumPy's rule, like
// jnp.broadcast_arrays; weak constants are returned unchanged. After an error it returns
// one zero Value per argument.
func (f *Function) BroadcastArrays(xs ...Value) []Value {
	const opName = "broadcast_in_dim"
	zeros := make([]Value, len(xs))
	vs, ok := f.check(opName, xs...)
	if !ok {
		return zeros
	}
	var shapes [][]int
	for _, v := range vs {
		if v.weak == nil {
			shapes = append(shapes, v.shape.Dims())
		}
	}
	target, err := BroadcastShapes(shapes...)
	if err != nil {
		f.fail(opName, -1, nil, err)
		return zeros
	}
	out := make([]Value, len(vs))
	for i, v := range vs {
		if v.weak != nil || slices.Equal(v.shape.Dims(), target) {
			out[i] = Value{v}
			continue
		}
		out[i] = f.BroadcastTo(Value{v}, target...)
	}
	if f.failed() {
		return zeros
	}
	return out
}

// axes checks dims against rank (negative dims count from the end) and returns them
// non-negative and ascending; no dims means all of them.
func (f *Function) axes(opName string, a *value, dims []int) ([]int, bool) {
	r := a.shape.Rank()
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
			f.failf(opName, 0, a, ErrShape, "dimension %d out of range or repeated for %v", d, a.shape)
			return nil, false
		}
		out[i] = n
	}
	slices.Sort(out)
	return out, true
}

// keptShape returns a's dimensions with those in dims (ascending) set to 1.
func keptShape(a *value, dims []int) []int {
	out := a.shape.Dims()
	for _, d := range dims {
		out[d] = 1
	}
	return out
}

// reduceKeep reduces x over dims with r, keeping the reduced dimensions with size 1.
func (f *Function) reduceKeep(x Value, r Reduction, dims []int) Value {
	const opName = "reduce"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	ax, ok := f.axes(opName, a, dims)
	if !ok {
		return Value{}
	}
	return f.Reshape(f.Reduce(Value{a}, r, ax...), keptShape(a, ax)...)
}

// SumKeepDims is Sum that keeps the reduced dimensions with size 1 (jnp.sum with
// keepdims=True); no dims means all of them, and negative dims count from the end.
func (f *Function) SumKeepDims(x Value, dims ...int) Value { return f.reduceKeep(x, Sum, dims) }

// ReduceMaxKeepDims is ReduceMax that keeps the reduced dimensions with size 1 (jnp.max
// with keepdims=True).
func (f *Function) ReduceMaxKeepDims(x Value, dims ...int) Value { return f.reduceKeep(x, Max, dims) }

// ReduceMinKeepDims is ReduceMin that keeps the reduced dimensions with size 1 (jnp.min
// with keepdims=True).
func (f *Function) ReduceMinKeepDims(x Value, dims ...int) Value { return f.reduceKeep(x, Min, dims) }

// accumType is the type jnp accumulates a float sum in: f32 for f16 and bf16, else d.
func accumType(d DType) DType {
	if d == dtypes.Float16 || d == dtypes.BFloat16 {
		return dtypes.Float32
	}
	return d
}

// convertTo converts v to d unless it already has that type.
func (f *Function) convertTo(v Value, d DType) Value {
	if v.DType() == d {
		return v
	}
	return f.Convert(v, d)
}

// floatOperand checks a float-only helper's operand and its dims.
func (f *Function) floatOperand(opName string, x Value, dims []int) (*value, []int, bool) {
	a, ok := f.operand1(opName, x)
	if !ok {
		return nil, nil, false
	}
	if !a.shape.DType().IsFloat() {
		f.failf(opName, 0, a, ErrDType, "%s needs a float operand, got %v (convert integers first; jnp gives float32 for them)", opName, a.shape)
		return nil, nil, false
	}
	ax, ok := f.axes(opName, a, dims)
	return a, ax, ok
}

// count returns the number of elements of a in dims.
func count(a *value, dims []int) int {
	n := 1
	for _, d := range dims {
		n *= a.shape.Dim(d)
	}
	return n
}

// jnpSum is jnp.sum over dims (ascending, non-negative): f16 and bf16 are summed in f32
// and converted back, as jnp does.
func (f *Function) jnpSum(x Value, dims []int) Value {
	d := x.DType()
	return f.convertTo(f.Reduce(f.convertTo(x, accumType(d)), Sum, dims...), d)
}

// mean is jnp.mean of float a over dims (ascending), in accumulation type acc, without the
// final conversion.
func (f *Function) mean(a *value, dims []int, acc DType) Value {
	if a == nil || f.failed() {
		return Value{}
	}
	s := f.Reduce(f.convertTo(Value{a}, acc), Sum, dims...)
	return f.Div(s, f.ConstantOf(acc, count(a, dims)))
}

// Mean returns the mean of float x over dims (all dimensions when none are given), as
// jnp.mean computes it: the sum divided by the element count, accumulated in f32 for f16
// and bf16 and converted back. Integer operands are an error wrapping ErrDType (convert
// them first).
func (f *Function) Mean(x Value, dims ...int) Value {
	a, ax, ok := f.floatOperand("mean", x, dims)
	if !ok {
		return Value{}
	}
	return f.convertTo(f.mean(a, ax, accumType(a.shape.DType())), a.shape.DType())
}

// MeanKeepDims is Mean that keeps the reduced dimensions with size 1 (jnp.mean with
// keepdims=True).
func (f *Function) MeanKeepDims(x Value, dims ...int) Value {
	a, ax, ok := f.floatOperand("mean", x, dims)
	if !ok {
		return Value{}
	}
	return f.Reshape(f.convertTo(f.mean(a, ax, accumType(a.shape.DType())), a.shape.DType()), keptShape(a, ax)...)
}

// variance is jnp.var (ddof 0) of a over dims in accumulation type acc.
func (f *Function) variance(a *value, dims []int, acc DType) Value {
	if a == nil || f.failed() {
		return Value{}
	}
	x := f.convertTo(Value{a}, acc)
	m := f.Reshape(f.mean(a, dims, acc), keptShape(a, dims)...)
	c := f.Sub(f.Broadcast2(x, m))
	return f.Div(f.Reduce(f.Mul(c, c), Sum, dims...), f.ConstantOf(acc, count(a, dims)))
}

// Variance returns the variance of float x over dims (all dimensions when none are
// given) with ddof 0, as jnp.var computes it: the mean of the squared deviations from the
// mean, accumulated in f32 for f16 and bf16. Integer operands are an error wrapping
// ErrDType.
func (f *Function) Variance(x Value, dims ...int) Value {
	a, ax, ok := f.floatOperand("variance", x, dims)
	if !ok {
		return Value{}
	}
	return f.convertTo(f.variance(a, ax, accumType(a.shape.DType())), a.shape.DType())
}

// VarianceKeepDims is Variance that keeps the reduced dimensions with size 1 (jnp.var
// with keepdims=True).
func (f *Function) VarianceKeepDims(x Value, dims ...int) Value {
	a, ax, ok := f.floatOperand("variance", x, dims)
	if !ok {
		return Value{}
	}
	return f.Reshape(f.convertTo(f.variance(a, ax, accumType(a.shape.DType())), a.shape.DType()), keptShape(a, ax)...)
}
