package autodiff

import (
	"math"

	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Elementwise rules. Each follows the JVP rule of the JAX primitive of the same op
// (jax/_src/lax/lax.py), transposed: the same products in the same order where that matters
// for rounding, and the same choices where the derivative is not defined (max and min split
// ties evenly, abs takes +1 at 0, sign, floor, ceil and round have zero derivatives). On
// complex values the holomorphic ops (exp, log, sin, tanh, div, pow, ...) take the same
// formulas in complex arithmetic, without conjugation, as JAX's do; abs, whose result is
// real, takes JAX's complex rule.

func init() {
	for name, r := range map[string]Rule{
		"stablehlo.add":         addRule,
		"stablehlo.subtract":    subRule,
		"stablehlo.multiply":    mulRule,
		"stablehlo.divide":      divRule,
		"stablehlo.remainder":   remRule,
		"stablehlo.maximum":     minMaxRule,
		"stablehlo.minimum":     minMaxRule,
		"stablehlo.power":       powRule,
		"stablehlo.negate":      unary(func(f *stablehlo.Function, g, x, y Value) Value { return f.Neg(g) }),
		"stablehlo.exponential": unary(func(f *stablehlo.Function, g, x, y Value) Value { return f.Mul(g, y) }),
		"stablehlo.log":         unary(func(f *stablehlo.Function, g, x, y Value) Value { return f.Div(g, x) }),
		"stablehlo.sqrt": unary(func(f *stablehlo.Function, g, x, y Value) Value {
			return f.Mul(g, f.Div(f.Full(y.Shape(), 0.5), y))
		}),
		"stablehlo.rsqrt": unary(func(f *stablehlo.Function, g, x, y Value) Value {
			return f.Mul(g, f.Mul(f.Full(y.Shape(), -0.5), f.Div(y, x)))
		}),
		"stablehlo.tanh": unary(func(f *stablehlo.Function, g, x, y Value) Value {
			return f.Mul(f.Add(g, f.Mul(g, y)), f.Sub(f.Full(y.Shape(), 1), y))
		}),
		"stablehlo.logistic": unary(func(f *stablehlo.Function, g, x, y Value) Value {
			return f.Mul(g, f.Mul(y, f.Sub(f.Full(y.Shape(), 1), y)))
		}),
		"stablehlo.sine":   unary(func(f *stablehlo.Function, g, x, y Value) Value { return f.Mul(g, f.Cos(x)) }),
		"stablehlo.cosine": unary(func(f *stablehlo.Function, g, x, y Value) Value { return f.Neg(f.Mul(g, f.Sin(x))) }),
		"stablehlo.abs":    unary(absVJP),
		"stablehlo.exponential_minus_one": unary(func(f *stablehlo.Function, g, x, y Value) Value {
			return f.Mul(g, f.Add(y, f.Full(y.Shape(), 1)))
		}),
		"stablehlo.log_plus_one": unary(func(f *stablehlo.Function, g, x, y Value) Value {
			return f.Div(g, f.Add(x, f.Full(x.Shape(), 1)))
		}),
		"stablehlo.tan": unary(func(f *stablehlo.Function, g, x, y Value) Value {
			return f.Mul(g, f.Add(f.Full(y.Shape(), 1), f.Mul(y, y)))
		}),
		"stablehlo.cbrt": unary(func(f *stablehlo.Function, g, x, y Value) Value {
			inv2 := f.Div(f.Full(y.Shape(), 1), f.Mul(y, y))
			return f.Mul(g, f.Mul(f.Full(y.Shape(), 1.0/3), inv2))
		}),
		"chlo.erf": unary(func(f *stablehlo.Function, g, x, y Value) Value {
			return f.Mul(f.Full(x.Shape(), 2/math.Sqrt(math.Pi)), f.Mul(g, f.Exp(f.Neg(f.Mul(x, x)))))
		}),
		"chlo.erfc": unary(func(f *stablehlo.Function, g, x, y Value) Value {
			return f.Mul(f.Full(x.Shape(), -2/math.Sqrt(math.Pi)), f.Mul(g, f.Exp(f.Neg(f.Mul(x, x)))))
		}),
		"chlo.erf_inv": unary(func(f *stablehlo.Function, g, x, y Value) Value {
			return f.Mul(f.Full(x.Shape(), math.Sqrt(math.Pi)/2), f.Mul(g, f.Exp(f.Mul(y, y))))
		}),
		"stablehlo.atan2":              atan2Rule,
		"stablehlo.bitcast_convert":    zeroRule,
		"stablehlo.sign":               zeroRule,
		"stablehlo.floor":              zeroRule,
		"stablehlo.ceil":               zeroRule,
		"stablehlo.round_nearest_afz":  zeroRule,
		"stablehlo.round_nearest_even": zeroRule,
		"stablehlo.select":             selectRule,
		"stablehlo.convert":            convertRule,
		"stablehlo.clamp":              clampRule,
	} {
		Register(name, r)
	}
}

// unary makes the rule of a unary op from d(f, g, x, y): the cotangent of x given the
// cotangent g of the result y = op(x).
func unary(d func(f *stablehlo.Function, g, x, y Value) Value) Rule {
	return func(b *Backward, op *stablehlo.Op, cts []Value) []Value {
		return []Value{d(b.f, cts[0], op.Operands()[0], op.Results()[0])}
	}
}

// absVJP is JAX's _abs_jvp_rule transposed: for real x the cotangent or its negation (+1 at
// 0); for complex x, whose |x| is real, complex(g, 0) * conj(x)/|x|, with |x| = 0 read as 1
// (JAX's _replace_zero), so that 0 gets none.
func absVJP(f *stablehlo.Function, g, x, y Value) Value {
	if !shapes.IsComplex(x.DType()) {
		return f.Select(f.Compare(x, f.Full(x.Shape(), 0), stablehlo.GE), g, f.Neg(g))
	}
	s := x.Shape()
	r := f.Convert(y, x.DType())
	r = f.Select(f.Equal(r, f.Full(s, 0)), f.Full(s, 1), r)
	return f.Mul(f.Complex(g, f.Full(g.Shape(), 0)), f.Div(f.Conj(x), r))
}

// zeroRule is the rule of an op whose derivative is zero wherever it is defined: no
// cotangent reaches its operands (JAX's defjvp_zero).
func zeroRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	return make([]Value, len(op.Operands()))
}

func addRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	return []Value{cts[0], cts[0]}
}

func subRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	out := []Value{cts[0], {}}
	if b.Active(op.Operands()[1]) {
		out[1] = b.f.Neg(cts[0])
	}
	return out
}

func mulRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	x, y := op.Operands()[0], op.Operands()[1]
	out := make([]Value, 2)
	if b.Active(x) {
		out[0] = b.f.Mul(cts[0], y)
	}
	if b.Active(y) {
		out[1] = b.f.Mul(x, cts[0])
	}
	return out
}

func divRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.f
	x, y := op.Operands()[0], op.Operands()[1]
	g := cts[0]
	out := make([]Value, 2)
	if b.Active(x) {
		out[0] = f.Div(g, y)
	}
	if b.Active(y) {
		// JAX: d/dy = -g * x * y**-2, with y**-2 = 1 / (y * y).
		inv2 := f.Div(f.Full(y.Shape(), 1), f.Mul(y, y))
		out[1] = f.Mul(f.Mul(f.Neg(g), x), inv2)
	}
	return out
}

func remRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.f
	x, y := op.Operands()[0], op.Operands()[1]
	g := cts[0]
	out := make([]Value, 2)
	if b.Active(x) {
		out[0] = g
	}
	if b.Active(y) {
		q := f.Div(x, y)
		out[1] = f.Mul(f.Neg(g), f.Mul(f.Sign(q), f.Floor(f.Abs(q))))
	}
	return out
}

// minMaxRule gives the cotangent to the operand equal to the result, and half of it to each
// when both are (JAX's _balanced_eq).
//
// The maximum of Relu (stablehlo.ReluParams) takes jax.nn.relu's derivative instead: the
// cotangent where x > 0, none at 0.
func minMaxRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.f
	x, y, ans := op.Operands()[0], op.Operands()[1], op.Results()[0]
	g := cts[0]
	s := ans.Shape()
	if _, ok := op.Params().(stablehlo.ReluParams); ok {
		return []Value{f.Select(f.Compare(x, f.Full(s, 0), stablehlo.GT), g, b.Zeros(s)), {}}
	}
	balanced := func(p, q Value) Value {
		num := f.Select(f.Equal(p, ans), f.Full(s, 1), f.Full(s, 0))
		den := f.Select(f.Equal(q, ans), f.Full(s, 2), f.Full(s, 1))
		return f.Mul(g, f.Div(num, den))
	}
	out := make([]Value, 2)
	if b.Active(x) {
		out[0] = balanced(x, y)
	}
	if b.Active(y) {
		out[1] = balanced(y, x)
	}
	return out
}

// powRule: d/dx = g * y * x**(y-1); d/dy = g * log(x) * x**y, with log(0) read as log(1)
// (JAX's _replace_zero), so that 0**y has a zero derivative in y.
func powRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.f
	x, y, ans := op.Operands()[0], op.Operands()[1], op.Results()[0]
	g := cts[0]
	s := ans.Shape()
	out := make([]Value, 2)
	if b.Active(x) {
		out[0] = f.Mul(g, f.Mul(y, f.Pow(x, f.Sub(y, f.Full(s, 1)))))
	}
	if b.Active(y) {
		safe := f.Select(f.Equal(x, f.Full(s, 0)), f.Full(s, 1), x)
		out[1] = f.Mul(g, f.Mul(f.Log(safe), ans))
	}
	return out
}

// atan2Rule (operands y, x of atan2(y, x)): d/dy = x / (y² + x²), d/dx = -y / (y² + x²).
func atan2Rule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.f
	y, x := op.Operands()[0], op.Operands()[1]
	g := cts[0]
	den := f.Add(f.Mul(y, y), f.Mul(x, x))
	out := make([]Value, 2)
	if b.Active(y) {
		out[0] = f.Mul(g, f.Div(x, den))
	}
	if b.Active(x) {
		out[1] = f.Mul(g, f.Div(f.Neg(y), den))
	}
	return out
}

func selectRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.f
	p, t, e := op.Operands()[0], op.Operands()[1], op.Operands()[2]
	g := cts[0]
	zeros := b.Zeros(g.Shape())
	out := make([]Value, 3)
	if b.Active(t) {
		out[1] = f.Select(p, g, zeros)
	}
	if b.Active(e) {
		out[2] = f.Select(p, zeros, g)
	}
	return out
}

// convertRule: a conversion between float and complex types (float8 and float4 included)
// converts the cotangent back, as JAX's _convert_element_type_transpose_rule does: a
// complex cotangent of a real value by its real part, as convert_element_type takes it;
// conversions from integers give none (their operands are never active).
func convertRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.f
	x := op.Operands()[0]
	d := x.DType()
	if !shapes.IsInexact(d) {
		return []Value{{}}
	}
	g := cts[0]
	if shapes.IsComplex(g.DType()) && !shapes.IsComplex(d) {
		if g = f.Real(g); g.DType() == d {
			return []Value{g}
		}
	}
	return []Value{f.Convert(g, d)}
}

// clampRule (operands min, x, max), as JAX's: the cotangent goes to x where min < x < max,
// to min where x < min < max, and to max where max < x; a scalar bound sums its share.
//
// A clamp of complex values is refused, as jax.vjp refuses it: the rule compares the operand
// with its bounds, and complex values have no order.
func clampRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.f
	lo, x, hi := op.Operands()[0], op.Operands()[1], op.Operands()[2]
	if shapes.IsComplex(x.DType()) {
		return b.Fail(op, "clamp of %v: complex values have no order for the derivative to compare (jax.vjp refuses it too: "+
			"lax.clamp's derivative compares with gt, which does not accept complex values)", x.Shape())
	}
	g := cts[0]
	s := g.Shape()
	zeros := b.Zeros(s)
	full := func(v Value) Value {
		if v.Shape().Rank() == 0 && s.Rank() > 0 {
			return f.BroadcastInDim(v, s.Dims(), nil)
		}
		return v
	}
	out := make([]Value, 3)
	if b.Active(x) {
		out[1] = f.Select(f.And(f.Compare(x, full(lo), stablehlo.GT), f.Compare(x, full(hi), stablehlo.LT)), g, zeros)
	}
	if b.Active(lo) {
		c := f.Select(f.And(f.Compare(full(lo), x, stablehlo.GT), f.Compare(full(lo), full(hi), stablehlo.LT)), g, zeros)
		out[0] = sumTo(f, c, lo.Shape())
	}
	if b.Active(hi) {
		c := f.Select(f.Compare(full(hi), x, stablehlo.LT), g, zeros)
		out[2] = sumTo(f, c, hi.Shape())
	}
	return out
}

// sumTo sums c down to shape s: all dimensions when s is a scalar and c is not.
func sumTo(f *stablehlo.Function, c Value, s Shape) Value {
	if s.Rank() == 0 && c.Shape().Rank() > 0 {
		return f.Sum(c)
	}
	return c
}
