package jnp

import (
	"github.com/xlamesh/xlamesh/internal/jnpcore"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Reductions that keep their dimensions, mean and variance, built from the builder's ops
// (reduce, reshape, convert, ...), so a pass over Function.Ops sees only those. Where these
// functions take dimensions, a negative one counts from the end (-1 is the last), as NumPy's
// axis arguments do; out-of-range or repeated dimensions are errors wrapping
// stablehlo.ErrShape.

// reduceKeep reduces x over dims with r, keeping the reduced dimensions with size 1.
func reduceKeep(f *stablehlo.Function, x stablehlo.Value, r stablehlo.Reduction, dims []int) stablehlo.Value {
	const opName = "reduce"
	vs, ok := f.Operands(opName, x)
	if !ok {
		return stablehlo.Value{}
	}
	a := vs[0]
	ax, ok := jnpcore.Axes(f, opName, a, dims)
	if !ok {
		return stablehlo.Value{}
	}
	return f.Reshape(f.Reduce(a, r, ax...), jnpcore.KeptShape(a.Shape(), ax)...)
}

// SumKeepDims is [stablehlo.Function.Sum] that keeps the reduced dimensions with size 1 (jnp.sum with
// keepdims=True); no dims means all of them, and negative dims count from the end.
func SumKeepDims(f *stablehlo.Function, x stablehlo.Value, dims ...int) stablehlo.Value {
	return reduceKeep(f, x, stablehlo.Sum, dims)
}

// ReduceMaxKeepDims is [stablehlo.Function.ReduceMax] that keeps the reduced dimensions with size 1 (jnp.max
// with keepdims=True).
func ReduceMaxKeepDims(f *stablehlo.Function, x stablehlo.Value, dims ...int) stablehlo.Value {
	return reduceKeep(f, x, stablehlo.Max, dims)
}

// ReduceMinKeepDims is [stablehlo.Function.ReduceMin] that keeps the reduced dimensions with size 1 (jnp.min
// with keepdims=True).
func ReduceMinKeepDims(f *stablehlo.Function, x stablehlo.Value, dims ...int) stablehlo.Value {
	return reduceKeep(f, x, stablehlo.Min, dims)
}

// Mean returns the mean of float x over dims (all dimensions when none are given), as
// jnp.mean computes it: the sum divided by the element count, accumulated in f32 for f16
// and bf16 and converted back. Integer operands are an error wrapping stablehlo.ErrDType
// (convert them first).
func Mean(f *stablehlo.Function, x stablehlo.Value, dims ...int) stablehlo.Value {
	a, ax, ok := jnpcore.FloatOperand(f, "mean", x, dims)
	if !ok {
		return stablehlo.Value{}
	}
	d := a.DType()
	return jnpcore.ConvertTo(f, jnpcore.Mean(f, a, ax, jnpcore.AccumType(d)), d)
}

// MeanKeepDims is Mean that keeps the reduced dimensions with size 1 (jnp.mean with
// keepdims=True).
func MeanKeepDims(f *stablehlo.Function, x stablehlo.Value, dims ...int) stablehlo.Value {
	a, ax, ok := jnpcore.FloatOperand(f, "mean", x, dims)
	if !ok {
		return stablehlo.Value{}
	}
	d := a.DType()
	return f.Reshape(jnpcore.ConvertTo(f, jnpcore.Mean(f, a, ax, jnpcore.AccumType(d)), d), jnpcore.KeptShape(a.Shape(), ax)...)
}

// variance is jnp.var (ddof 0) of a over dims in accumulation type acc.
func variance(f *stablehlo.Function, a stablehlo.Value, dims []int, acc stablehlo.DType) stablehlo.Value {
	if !a.Valid() || f.Failed() {
		return stablehlo.Value{}
	}
	x := jnpcore.ConvertTo(f, a, acc)
	m := f.Reshape(jnpcore.Mean(f, a, dims, acc), jnpcore.KeptShape(a.Shape(), dims)...)
	c := f.Sub(f.Broadcast2(x, m))
	return f.Div(f.Reduce(f.Mul(c, c), stablehlo.Sum, dims...), f.ConstantOf(acc, jnpcore.Count(a.Shape(), dims)))
}

// Variance returns the variance of float x over dims (all dimensions when none are
// given) with ddof 0, as jnp.var computes it: the mean of the squared deviations from the
// mean, accumulated in f32 for f16 and bf16. Integer operands are an error wrapping
// stablehlo.ErrDType.
func Variance(f *stablehlo.Function, x stablehlo.Value, dims ...int) stablehlo.Value {
	a, ax, ok := jnpcore.FloatOperand(f, "variance", x, dims)
	if !ok {
		return stablehlo.Value{}
	}
	d := a.DType()
	return jnpcore.ConvertTo(f, variance(f, a, ax, jnpcore.AccumType(d)), d)
}

// VarianceKeepDims is Variance that keeps the reduced dimensions with size 1 (jnp.var
// with keepdims=True).
func VarianceKeepDims(f *stablehlo.Function, x stablehlo.Value, dims ...int) stablehlo.Value {
	a, ax, ok := jnpcore.FloatOperand(f, "variance", x, dims)
	if !ok {
		return stablehlo.Value{}
	}
	d := a.DType()
	return f.Reshape(jnpcore.ConvertTo(f, variance(f, a, ax, jnpcore.AccumType(d)), d), jnpcore.KeptShape(a.Shape(), ax)...)
}
