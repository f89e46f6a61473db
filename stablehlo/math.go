package stablehlo

import (
	"github.com/gomlx/gopjrt/dtypes"
)

// floatUnary emits the shape-preserving op name (a StableHLO or CHLO op) on a float
// operand; opName names it in errors.
func (f *Function) floatUnary(opName, name string, x Value) Value {
	return f.unaryNamed(opName, name, x, floating, "float")
}

// Erf returns the error function of float x elementwise (lax.erf, jax.scipy.special.erf),
// written as `chlo.erf` as JAX writes it; XLA expands it into its own polynomial.
func (f *Function) Erf(x Value) Value { return f.floatUnary("erf", "chlo.erf", x) }

// ErfInv returns the inverse error function of float x elementwise (lax.erf_inv), written
// as `chlo.erf_inv` as JAX writes it: -inf at -1, inf at 1, NaN outside [-1, 1].
func (f *Function) ErfInv(x Value) Value { return f.floatUnary("erf_inv", "chlo.erf_inv", x) }

// Erfc returns the complementary error function 1 - erf(x) of float x elementwise (lax.erfc),
// written as `chlo.erfc` as JAX writes it, which keeps erfc's small values that 1 - Erf loses.
func (f *Function) Erfc(x Value) Value { return f.floatUnary("erfc", "chlo.erfc", x) }

// Expm1 returns e**x - 1 elementwise, accurate near 0 (stablehlo.exponential_minus_one,
// lax.expm1).
func (f *Function) Expm1(x Value) Value {
	return f.floatUnary("exponential_minus_one", "stablehlo.exponential_minus_one", x)
}

// Log1p returns log(1 + x) elementwise, accurate near 0 (stablehlo.log_plus_one,
// lax.log1p).
func (f *Function) Log1p(x Value) Value {
	return f.floatUnary("log_plus_one", "stablehlo.log_plus_one", x)
}

// Round rounds float x to the nearest integer elementwise, halves away from zero
// (stablehlo.round_nearest_afz, lax.round's default).
func (f *Function) Round(x Value) Value {
	return f.floatUnary("round_nearest_afz", "stablehlo.round_nearest_afz", x)
}

// RoundEven rounds float x to the nearest integer elementwise, halves to even
// (stablehlo.round_nearest_even, lax.round with TO_NEAREST_EVEN, jnp.round).
func (f *Function) RoundEven(x Value) Value {
	return f.floatUnary("round_nearest_even", "stablehlo.round_nearest_even", x)
}

// Tan returns the tangent of float x elementwise (stablehlo.tan, lax.tan).
func (f *Function) Tan(x Value) Value { return f.floatUnary("tan", "stablehlo.tan", x) }

// Cbrt returns the cube root of float x elementwise (stablehlo.cbrt, lax.cbrt).
func (f *Function) Cbrt(x Value) Value { return f.floatUnary("cbrt", "stablehlo.cbrt", x) }

// IsFinite reports elementwise whether float x is neither infinite nor NaN: a pred
// tensor of x's shape (stablehlo.is_finite, lax.is_finite).
func (f *Function) IsFinite(x Value) Value {
	const opName = "is_finite"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	if !a.shape.DType().IsFloat() {
		f.failf(opName, 0, a, ErrDType, "is_finite needs float operands, got %s", dtypeName(a.shape.DType()))
		return Value{}
	}
	return f.emit("stablehlo.is_finite", []*value{a}, a.shape.WithDType(dtypes.Bool), nil)
}

// Atan2 returns the angle of the point (y, x) elementwise, atan(y/x) in the right
// quadrant (stablehlo.atan2, lax.atan2); y and x are floats, paired as in every binary op.
func (f *Function) Atan2(y, x Value) Value { return f.binary("atan2", y, x, floating, "float") }

// Clamp returns x limited to [lo, hi] elementwise, max(lo, min(x, hi)) (stablehlo.clamp,
// lax.clamp(lo, x, hi)). lo and hi are of x's element type (a weak constant takes it); the
// three broadcast with NumPy's rule, scalar bounds staying scalars as stablehlo.clamp takes
// them. Shapes that do not broadcast give an error wrapping ErrShape. NaN propagates as in
// XLA.
func (f *Function) Clamp(lo, x, hi Value) Value {
	const opName = "clamp"
	vs, ok := f.check(opName, lo, x, hi)
	if !ok {
		return Value{}
	}
	a := f.materialize(vs[1], vs[1].shape)
	l := f.materialize(vs[0], scalarOf(a.shape))
	h := f.materialize(vs[2], scalarOf(a.shape))
	if f.failed() {
		return Value{}
	}
	if a.shape.DType() == dtypes.Bool {
		f.failf(opName, 1, a, ErrDType, "clamp of pred")
		return Value{}
	}
	for i, b := range []*value{l, h} {
		if b.shape.DType() != a.shape.DType() {
			f.failf(opName, 2*i, b, ErrDType, "bound %v differs in element type from operand %v", b.shape, a.shape)
			return Value{}
		}
	}
	// Scalar bounds stay scalars; the others broadcast with x to their common shape.
	var ops []*value
	var given []Shape
	var pos []int
	for i, v := range []*value{l, a, h} {
		if v == a || v.shape.Rank() > 0 {
			ops = append(ops, v)
			given = append(given, v.shape)
			pos = append(pos, i)
		}
	}
	out, ok := f.broadcastAll(opName, "", ops, given, pos)
	if !ok {
		return Value{}
	}
	i := 0
	if l.shape.Rank() > 0 {
		l, i = out[0], 1
	}
	a = out[i]
	if h.shape.Rank() > 0 {
		h = out[i+1]
	}
	return f.emit("stablehlo.clamp", []*value{l, a, h}, a.shape, nil)
}
