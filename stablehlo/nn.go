package stablehlo

import (
	"math"
	"slices"

	"github.com/gomlx/gopjrt/dtypes"
)

// Neural-network helpers with the numerics of jax.nn, jax.scipy.special and flax: each is
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
func (f *Function) floatAxes(opName string, x Value, dims []int) (*value, []int, bool) {
	a, ok := f.operand1(opName, x)
	if !ok {
		return nil, nil, false
	}
	if !a.shape.DType().IsFloat() {
		f.failf(opName, 0, a, ErrDType, "%s needs a float operand, got %v", opName, a.shape)
		return nil, nil, false
	}
	if a.shape.Rank() == 0 {
		f.failf(opName, 0, a, ErrShape, "%s needs an operand of rank 1 or more, got %v", opName, a.shape)
		return nil, nil, false
	}
	ax, ok := f.axes(opName, a, lastAxis(dims))
	return a, ax, ok
}

// Softmax returns exp(x) normalised to sum 1 over dims (the last dimension when none are
// given), as jax.nn.softmax computes it: exp(x - max) / sum(exp(x - max)), the sum
// accumulated in f32 for f16 and bf16.
func (f *Function) Softmax(x Value, dims ...int) Value {
	a, ax, ok := f.floatAxes("softmax", x, dims)
	if !ok {
		return Value{}
	}
	keep := keptShape(a, ax)
	m := f.Reshape(f.Reduce(Value{a}, Max, ax...), keep...)
	e := f.Exp(f.Sub(f.Broadcast2(Value{a}, m)))
	s := f.Reshape(f.jnpSum(e, ax), keep...)
	return f.Div(f.Broadcast2(e, s))
}

// LogSoftmax returns x - log(sum(exp(x))) over dims (the last dimension when none are
// given), as jax.nn.log_softmax computes it: shifted by the maximum first, so large
// inputs do not overflow.
func (f *Function) LogSoftmax(x Value, dims ...int) Value {
	a, ax, ok := f.floatAxes("log_softmax", x, dims)
	if !ok {
		return Value{}
	}
	keep := keptShape(a, ax)
	m := f.Reshape(f.Reduce(Value{a}, Max, ax...), keep...)
	shifted := f.Sub(f.Broadcast2(Value{a}, m))
	lse := f.Reshape(f.Log(f.jnpSum(f.Exp(shifted), ax)), keep...)
	return f.Sub(f.Broadcast2(shifted, lse))
}

// finite returns the pred tensor |x| < inf (false for infinities and NaN).
func (f *Function) finite(x Value) Value {
	return f.Less(f.Abs(x), f.Constant(math.Inf(1)))
}

// LogSumExp returns log(sum(exp(x))) over dims (all dimensions when none are given), as
// jax.nn.logsumexp computes it: the maximum m over dims (0 where it is not finite) is
// subtracted before exp and added back after log, so the result is stable for large and
// for all -inf inputs.
func (f *Function) LogSumExp(x Value, dims ...int) Value {
	return f.logSumExp(x, dims, false)
}

// LogSumExpKeepDims is LogSumExp that keeps the reduced dimensions with size 1
// (keepdims=True).
func (f *Function) LogSumExpKeepDims(x Value, dims ...int) Value {
	return f.logSumExp(x, dims, true)
}

func (f *Function) logSumExp(x Value, dims []int, keepDims bool) Value {
	const opName = "logsumexp"
	a, ax, ok := f.floatOperand(opName, x, dims)
	if !ok {
		return Value{}
	}
	keep := keptShape(a, ax)
	m := f.Reduce(Value{a}, Max, ax...)
	m = f.Select(f.finite(m), m, f.Constant(0.0))
	e := f.Exp(f.Sub(f.Broadcast2(Value{a}, f.Reshape(m, keep...))))
	out := f.Add(f.Log(f.jnpSum(e, ax)), m)
	if keepDims {
		return f.Reshape(out, keep...)
	}
	return out
}

// Relu returns max(x, 0) elementwise, as jax.nn.relu.
func (f *Function) Relu(x Value) Value {
	const opName = "maximum"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	if !numeric(a.shape.DType()) {
		f.failf(opName, 0, a, ErrDType, "relu needs a numeric operand, got %v", a.shape)
		return Value{}
	}
	r := f.Max(Value{a}, f.Constant(0))
	if r.Valid() {
		f.ops[len(f.ops)-1].params = ReluParams{}
	}
	return r
}

// ReluParams mark the stablehlo.maximum that Relu emits (Op.Params; it prints nothing), so
// that a gradient takes jax.nn.relu's derivative, 0 at 0, instead of lax.max's, which
// splits a tie evenly.
type ReluParams struct{}

// Gelu returns the Gaussian error linear unit of float x elementwise, as jax.nn.gelu:
// with approximate, x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) (jax.nn.gelu's
// default); otherwise the exact x/2 * erfc(-x/sqrt(2)), with erfc written as
// `chlo.erfc`, as JAX lowers it (not 1 - Erf, which loses the small values of erfc).
func (f *Function) Gelu(x Value, approximate bool) Value {
	const opName = "gelu"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	if !a.shape.DType().IsFloat() {
		f.failf(opName, 0, a, ErrDType, "gelu needs a float operand, got %v", a.shape)
		return Value{}
	}
	v := Value{a}
	d := a.shape.DType()
	if approximate {
		c := f.ConstantOf(d, math.Sqrt(2/math.Pi))
		cube := f.Mul(v, f.Mul(v, v))
		inner := f.Mul(c, f.Add(v, f.Mul(f.Constant(0.044715), cube)))
		cdf := f.Mul(f.Constant(0.5), f.Add(f.Constant(1.0), f.Tanh(inner)))
		return f.Mul(v, cdf)
	}
	c := f.ConstantOf(d, math.Sqrt(0.5))
	erfc := f.floatUnary("erfc", "chlo.erfc", f.Mul(f.Neg(v), c)) // math.go's helper
	return f.Mul(f.Mul(f.Constant(0.5), v), erfc)
}

// LayerNormOptions configure LayerNorm. The zero value is flax.linen.LayerNorm's default
// without parameters: epsilon 1e-6 over the last dimension, no scale, no bias.
type LayerNormOptions struct {
	// Scale and Bias, when valid, multiply and shift the normalised value (flax's use_scale
	// and use_bias with the given parameters). Their shape is that of x's normalised
	// dimensions, in order; they are broadcast over the others. The zero Value means none.
	Scale, Bias Value
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
// flax's is.
func (f *Function) LayerNorm(x Value, o LayerNormOptions) Value {
	const opName = "layer_norm"
	a, ax, ok := f.floatAxes(opName, x, o.Dims)
	if !ok {
		return Value{}
	}
	eps := o.Epsilon
	if eps == 0 {
		eps = 1e-6
	}
	var feature []int // the normalised dims' sizes, the shape of scale and bias
	for _, d := range ax {
		feature = append(feature, a.shape.Dim(d))
	}
	keep := keptShape(a, ax)
	outType := a.shape.DType()
	params := []Value{}
	for i, p := range []Value{o.Scale, o.Bias} {
		if !p.Valid() {
			continue
		}
		vs, ok := f.check(opName, p)
		if !ok {
			return Value{}
		}
		pv := f.materialize(vs[0], NewShape(a.shape.DType(), feature...))
		if !pv.shape.DType().IsFloat() || !slices.Equal(pv.shape.Dims(), feature) {
			f.failf(opName, i+1, pv, ErrShape, "%s must be a float tensor of the normalised dimensions' shape %v, got %v",
				[]string{"scale", "bias"}[i], feature, pv.shape)
			return Value{}
		}
		outType = promoteFloat(outType, pv.shape.DType())
		params = append(params, Value{pv})
	}
	comp := promoteFloat(a.shape.DType(), dtypes.Float32)
	xc := f.convertTo(Value{a}, comp)
	mu := f.mean(xc.v, ax, comp)
	mu2 := f.mean(f.Mul(xc, xc).v, ax, comp)
	variance := f.Max(f.Constant(0.0), f.Sub(mu2, f.Mul(mu, mu)))
	mu, variance = f.Reshape(mu, keep...), f.Reshape(variance, keep...)
	// y = x - mean, in the promoted type of x and the f32 statistics.
	yType := promoteFloat(a.shape.DType(), comp)
	y := f.Sub(f.Broadcast2(f.convertTo(Value{a}, yType), f.convertTo(mu, yType)))
	mul := f.Rsqrt(f.Add(variance, f.Constant(eps)))
	featureShape := slices.Repeat([]int{1}, a.shape.Rank()) // flax's feature_shape
	for _, d := range ax {
		featureShape[d] = a.shape.Dim(d)
	}
	reshaped := func(p Value) Value { return f.Reshape(p, featureShape...) }
	if o.Scale.Valid() {
		s := reshaped(params[0])
		t := promoteFloat(mul.DType(), s.DType())
		mul = f.Mul(f.Broadcast2(f.convertTo(mul, t), f.convertTo(s, t)))
	}
	t := promoteFloat(y.DType(), mul.DType())
	y = f.Mul(f.Broadcast2(f.convertTo(y, t), f.convertTo(mul, t)))
	if o.Bias.Valid() {
		b := reshaped(params[len(params)-1])
		t := promoteFloat(y.DType(), b.DType())
		y = f.Add(f.Broadcast2(f.convertTo(y, t), f.convertTo(b, t)))
	}
	return f.convertTo(y, outType)
}

// promoteFloat is JAX's type promotion of two float types: the wider one, and f32 for f16
// with bf16.
func promoteFloat(a, b DType) DType {
	switch {
	case a == b:
		return a
	case a == dtypes.Float64 || b == dtypes.Float64:
		return dtypes.Float64
	default: // f16, bf16 and f32 in some mix
		return dtypes.Float32
	}
}
