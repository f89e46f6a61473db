package nn

import (
	"math"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/internal/jnpcore"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Neural-network functions with the numerics of jax.nn, jax.scipy.special and flax: each is
// built from the builder's ops in the order JAX builds it, so results agree with JAX's to
// rounding. Dimensions may be negative (counting from the end).

// lastAxis returns dims, or {-1} when dims is empty.
func lastAxis(dims []int) []int {
	if len(dims) == 0 {
		return []int{-1}
	}
	return dims
}

// floatAxes checks a float operand of opName and its dims (default: the last dimension).
func floatAxes(f *stablehlo.Function, opName string, x stablehlo.Value, dims []int) (stablehlo.Value, []int, bool) {
	vs, ok := f.Operands(opName, x)
	if !ok {
		return stablehlo.Value{}, nil, false
	}
	a := vs[0]
	if !a.DType().IsFloat() {
		f.Failf(opName, 0, a, stablehlo.ErrDType, "%s needs a float operand, got %v", opName, a.Shape())
		return stablehlo.Value{}, nil, false
	}
	if a.Shape().Rank() == 0 {
		f.Failf(opName, 0, a, stablehlo.ErrShape, "%s needs an operand of rank 1 or more, got %v", opName, a.Shape())
		return stablehlo.Value{}, nil, false
	}
	ax, ok := jnpcore.Axes(f, opName, a, lastAxis(dims))
	return a, ax, ok
}

// Softmax returns exp(x) normalised to sum 1 over dims (the last dimension when none are
// given), as jax.nn.softmax computes it: exp(x - max) / sum(exp(x - max)), the sum
// accumulated in f32 for f16 and bf16. x that is not float, or a scalar, is an error
// wrapping stablehlo.ErrDType or stablehlo.ErrShape.
func Softmax(f *stablehlo.Function, x stablehlo.Value, dims ...int) stablehlo.Value {
	a, ax, ok := floatAxes(f, "softmax", x, dims)
	if !ok {
		return stablehlo.Value{}
	}
	keep := jnpcore.KeptShape(a.Shape(), ax)
	m := f.Reshape(f.Reduce(a, stablehlo.Max, ax...), keep...)
	e := f.Exp(f.Sub(f.Broadcast2(a, m)))
	s := f.Reshape(jnpcore.Sum(f, e, ax), keep...)
	return f.Div(f.Broadcast2(e, s))
}

// LogSoftmax returns x - log(sum(exp(x))) over dims (the last dimension when none are
// given), as jax.nn.log_softmax computes it: shifted by the maximum first, so large
// inputs do not overflow. Its errors are Softmax's.
func LogSoftmax(f *stablehlo.Function, x stablehlo.Value, dims ...int) stablehlo.Value {
	a, ax, ok := floatAxes(f, "log_softmax", x, dims)
	if !ok {
		return stablehlo.Value{}
	}
	keep := jnpcore.KeptShape(a.Shape(), ax)
	m := f.Reshape(f.Reduce(a, stablehlo.Max, ax...), keep...)
	shifted := f.Sub(f.Broadcast2(a, m))
	lse := f.Reshape(f.Log(jnpcore.Sum(f, f.Exp(shifted), ax)), keep...)
	return f.Sub(f.Broadcast2(shifted, lse))
}

// finite returns the pred tensor |x| < inf (false for infinities and NaN).
func finite(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
	return f.Less(f.Abs(x), f.Constant(math.Inf(1)))
}

// LogSumExp returns log(sum(exp(x))) over dims (all dimensions when none are given), as
// jax.nn.logsumexp computes it: the maximum m over dims (0 where it is not finite) is
// subtracted before exp and added back after log, so the result is stable for large and
// for all -inf inputs. x that is not float is an error wrapping stablehlo.ErrDType.
func LogSumExp(f *stablehlo.Function, x stablehlo.Value, dims ...int) stablehlo.Value {
	return logSumExp(f, x, dims, false)
}

// LogSumExpKeepDims is LogSumExp that keeps the reduced dimensions with size 1
// (keepdims=True).
func LogSumExpKeepDims(f *stablehlo.Function, x stablehlo.Value, dims ...int) stablehlo.Value {
	return logSumExp(f, x, dims, true)
}

func logSumExp(f *stablehlo.Function, x stablehlo.Value, dims []int, keepDims bool) stablehlo.Value {
	const opName = "logsumexp"
	a, ax, ok := jnpcore.FloatOperand(f, opName, x, dims)
	if !ok {
		return stablehlo.Value{}
	}
	keep := jnpcore.KeptShape(a.Shape(), ax)
	m := f.Reduce(a, stablehlo.Max, ax...)
	m = f.Select(finite(f, m), m, f.Constant(0.0))
	e := f.Exp(f.Sub(f.Broadcast2(a, f.Reshape(m, keep...))))
	out := f.Add(f.Log(jnpcore.Sum(f, e, ax)), m)
	if keepDims {
		return f.Reshape(out, keep...)
	}
	return out
}

// Relu returns max(x, 0) elementwise, as jax.nn.relu: one stablehlo.maximum whose Params
// are stablehlo.ReluParams, so that a gradient takes jax.nn.relu's derivative (0 at 0).
// x that is not an integer or float is an error wrapping stablehlo.ErrDType.
func Relu(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
	const opName = "maximum"
	vs, ok := f.Operands(opName, x)
	if !ok {
		return stablehlo.Value{}
	}
	a := vs[0]
	if d := a.DType(); !shapes.IsSigned(d) && !shapes.IsUnsigned(d) && !shapes.IsFloat(d) && !shapes.IsComplex(d) {
		f.Failf(opName, 0, a, stablehlo.ErrDType, "relu needs a numeric operand, got %v", a.Shape())
		return stablehlo.Value{}
	}
	if d := a.DType(); shapes.IsComplex(d) { // as f.Max rejects it
		f.Failf(opName, 0, a, stablehlo.ErrDType, "maximum needs non-complex operands, got %s", shapes.XLAName(d))
		return stablehlo.Value{}
	}
	zero := f.Full(a.Shape(), 0)
	return f.AddOp(stablehlo.OpSpec{Name: "stablehlo.maximum", Operands: []stablehlo.Value{a, zero},
		Results: []stablehlo.Shape{a.Shape()}, Params: stablehlo.ReluParams{}})[0]
}

// Gelu returns the Gaussian error linear unit of float x elementwise, as jax.nn.gelu:
// with approximate, x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) (jax.nn.gelu's
// default); otherwise the exact x/2 * erfc(-x/sqrt(2)), with erfc written as
// `chlo.erfc`, as JAX lowers it (not 1 - Erf, which loses the small values of erfc).
// x that is not float is an error wrapping stablehlo.ErrDType.
func Gelu(f *stablehlo.Function, x stablehlo.Value, approximate bool) stablehlo.Value {
	const opName = "gelu"
	vs, ok := f.Operands(opName, x)
	if !ok {
		return stablehlo.Value{}
	}
	v := vs[0]
	d := v.DType()
	if !d.IsFloat() {
		f.Failf(opName, 0, v, stablehlo.ErrDType, "gelu needs a float operand, got %v", v.Shape())
		return stablehlo.Value{}
	}
	if approximate {
		c := f.ConstantOf(d, math.Sqrt(2/math.Pi))
		cube := f.Mul(v, f.Mul(v, v))
		inner := f.Mul(c, f.Add(v, f.Mul(f.Constant(0.044715), cube)))
		cdf := f.Mul(f.Constant(0.5), f.Add(f.Constant(1.0), f.Tanh(inner)))
		return f.Mul(v, cdf)
	}
	c := f.ConstantOf(d, math.Sqrt(0.5))
	erfc := f.Erfc(f.Mul(f.Neg(v), c))
	return f.Mul(f.Mul(f.Constant(0.5), v), erfc)
}

// LayerNormOptions configure LayerNorm. The zero value is flax.linen.LayerNorm's default
// without parameters: epsilon 1e-6 over the last dimension, no scale, no bias.
type LayerNormOptions struct {
	// Scale and Bias, when valid, multiply and shift the normalised value (flax's use_scale
	// and use_bias with the given parameters). Their shape is that of x's normalised
	// dimensions, in order; they are broadcast over the others. The zero Value means none.
	Scale, Bias stablehlo.Value
	// Epsilon is added to the variance; 0 means flax's default, 1e-6.
	Epsilon float64
	// Dims are the normalised dimensions (flax's reduction_axes and feature_axes); none
	// means the last. Negative dimensions count from the end.
	Dims []int
}

// LayerNorm normalises float x to mean 0 and variance 1 over o.Dims, then scales and
// shifts it, as flax.linen.LayerNorm computes it: the mean and the mean of squares in at
// least f32, var = max(0, E[x²] - E[x]²), y = (x - mean) * (rsqrt(var + eps) * scale) +
// bias. The result has the widest type of x, scale and bias (f32 for bf16 with f16), as
// flax's is. A scale or bias that is not a float tensor of the normalised dimensions' shape
// is an error wrapping stablehlo.ErrShape; x's errors are Softmax's.
func LayerNorm(f *stablehlo.Function, x stablehlo.Value, o LayerNormOptions) stablehlo.Value {
	const opName = "layer_norm"
	a, ax, ok := floatAxes(f, opName, x, o.Dims)
	if !ok {
		return stablehlo.Value{}
	}
	as := a.Shape()
	eps := o.Epsilon
	if eps == 0 {
		eps = 1e-6
	}
	var feature []int // the normalised dims' sizes, the shape of scale and bias
	for _, d := range ax {
		feature = append(feature, as.Dim(d))
	}
	keep := jnpcore.KeptShape(as, ax)
	outType := as.DType()
	params := []stablehlo.Value{}
	for i, p := range []stablehlo.Value{o.Scale, o.Bias} {
		if !p.Valid() {
			continue
		}
		if !f.CheckOperands(opName, p) {
			return stablehlo.Value{}
		}
		pv := f.Materialize(p, stablehlo.NewShape(as.DType(), feature...))
		if ps := pv.Shape(); !ps.DType().IsFloat() || !slices.Equal(ps.Dims(), feature) {
			f.Failf(opName, i+1, pv, stablehlo.ErrShape, "%s must be a float tensor of the normalised dimensions' shape %v, got %v",
				[]string{"scale", "bias"}[i], feature, ps)
			return stablehlo.Value{}
		}
		outType = promoteFloat(outType, pv.DType())
		params = append(params, pv)
	}
	comp := promoteFloat(as.DType(), dtypes.Float32)
	xc := jnpcore.ConvertTo(f, a, comp)
	mu := jnpcore.Mean(f, xc, ax, comp)
	mu2 := jnpcore.Mean(f, f.Mul(xc, xc), ax, comp)
	variance := f.Max(f.Constant(0.0), f.Sub(mu2, f.Mul(mu, mu)))
	mu, variance = f.Reshape(mu, keep...), f.Reshape(variance, keep...)
	// y = x - mean, in the promoted type of x and the f32 statistics.
	yType := promoteFloat(as.DType(), comp)
	y := f.Sub(f.Broadcast2(jnpcore.ConvertTo(f, a, yType), jnpcore.ConvertTo(f, mu, yType)))
	mul := f.Rsqrt(f.Add(variance, f.Constant(eps)))
	featureShape := slices.Repeat([]int{1}, as.Rank()) // flax's feature_shape
	for _, d := range ax {
		featureShape[d] = as.Dim(d)
	}
	reshaped := func(p stablehlo.Value) stablehlo.Value { return f.Reshape(p, featureShape...) }
	if o.Scale.Valid() {
		s := reshaped(params[0])
		t := promoteFloat(mul.DType(), s.DType())
		mul = f.Mul(f.Broadcast2(jnpcore.ConvertTo(f, mul, t), jnpcore.ConvertTo(f, s, t)))
	}
	t := promoteFloat(y.DType(), mul.DType())
	y = f.Mul(f.Broadcast2(jnpcore.ConvertTo(f, y, t), jnpcore.ConvertTo(f, mul, t)))
	if o.Bias.Valid() {
		b := reshaped(params[len(params)-1])
		t := promoteFloat(y.DType(), b.DType())
		y = f.Add(f.Broadcast2(jnpcore.ConvertTo(f, y, t), jnpcore.ConvertTo(f, b, t)))
	}
	return jnpcore.ConvertTo(f, y, outType)
}

// promoteFloat is JAX's type promotion of two float types: the wider one, and f32 for f16
// with bf16.
func promoteFloat(a, b stablehlo.DType) stablehlo.DType {
	switch {
	case a == b:
		return a
	case a == dtypes.Float64 || b == dtypes.Float64:
		return dtypes.Float64
	default: // f16, bf16 and f32 in some mix
		return dtypes.Float32
	}
}

// OneHot returns the one-hot encoding of the integer tensor indices over n classes, like
// jax.nn.one_hot(indices, n, dtype=d): a tensor of indices' shape plus a last dimension n,
// 1 where the last index equals the index and 0 elsewhere; an index outside [0, n) gives a
// row of zeros. Indices that are not integers are an error wrapping stablehlo.ErrDType; a
// negative n, one wrapping stablehlo.ErrShape.
func OneHot(f *stablehlo.Function, indices stablehlo.Value, n int, d stablehlo.DType) stablehlo.Value {
	const opName = "compare"
	vs, ok := f.Operands(opName, indices)
	if !ok {
		return stablehlo.Value{}
	}
	i := vs[0]
	is := i.Shape()
	if !shapes.IsSigned(is.DType()) && !shapes.IsUnsigned(is.DType()) {
		f.Failf(opName, 0, i, stablehlo.ErrDType, "OneHot: indices must be integers, got %v", is)
		return stablehlo.Value{}
	}
	if n < 0 {
		f.Failf(opName, -1, stablehlo.Value{}, stablehlo.ErrShape, "OneHot: negative number of classes %d", n)
		return stablehlo.Value{}
	}
	col := f.Reshape(i, append(is.Dims(), 1)...)
	hot := f.Compare(col, f.Iota(stablehlo.NewShape(is.DType(), n), 0), stablehlo.EQ)
	if d == dtypes.Bool {
		return hot
	}
	return f.Convert(hot, d)
}
