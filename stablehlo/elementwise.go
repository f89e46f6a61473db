package stablehlo

import (
	"slices"
	"strconv"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// dtype classes accepted by elementwise ops.
func anyType(DType) bool         { return true }
func numeric(d DType) bool       { return isInt(d) || shapes.IsFloat(d) || shapes.IsComplex(d) }
func realNum(d DType) bool       { return isInt(d) || shapes.IsFloat(d) }
func floating(d DType) bool      { return shapes.IsFloat(d) }
func inexact(d DType) bool       { return shapes.IsFloat(d) || shapes.IsComplex(d) }
func intOrPred(d DType) bool     { return isInt(d) || d == dtypes.Bool }
func signedOrFloat(d DType) bool { return signed(d) || shapes.IsFloat(d) }
func notComplex(d DType) bool    { return !shapes.IsComplex(d) }

// unary emits the shape-preserving op stablehlo.<opName> on an operand whose element type
// allow accepts; what names the allowed types in the error.
func (f *Function) unary(opName string, x Value, allow func(DType) bool, what string) Value {
	return f.unaryNamed(opName, "stablehlo."+opName, x, allow, what)
}

// unaryNamed is unary for the op name, which need not be opName (a CHLO op, say).
func (f *Function) unaryNamed(opName, name string, x Value, allow func(DType) bool, what string) Value {
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	if !allow(a.shape.DType()) {
		f.failf(opName, 0, a, ErrDType, "%s needs %s operands, got %s", opName, what, dtypeName(a.shape.DType()))
		return Value{}
	}
	return f.emit(name, []*value{a}, a.shape, nil)
}

// Neg returns -x elementwise (stablehlo.negate).
func (f *Function) Neg(x Value) Value { return f.unary("negate", x, numeric, "numeric") }

// Abs returns |x| elementwise; x is signed integer, float or complex (whose magnitude is of
// the matching real type: f32 for complex64).
func (f *Function) Abs(x Value) Value {
	a, ok := f.operand1("abs", x)
	if !ok {
		return Value{}
	}
	if d := a.shape.DType(); shapes.IsComplex(d) {
		return f.emit("stablehlo.abs", []*value{a}, a.shape.WithDType(realOf(d)), nil)
	}
	return f.unary("abs", x, signedOrFloat, "signed integer, float or complex")
}

// realOf returns the real type of a complex type's parts (f32 for complex64).
func realOf(d DType) DType {
	if d == dtypes.Complex128 {
		return dtypes.Float64
	}
	return dtypes.Float32
}

// Exp returns e**x elementwise (stablehlo.exponential).
func (f *Function) Exp(x Value) Value { return f.unary("exponential", x, inexact, "float or complex") }

// Log returns the natural logarithm elementwise.
func (f *Function) Log(x Value) Value { return f.unary("log", x, inexact, "float or complex") }

// Sqrt returns the square root elementwise.
func (f *Function) Sqrt(x Value) Value { return f.unary("sqrt", x, inexact, "float or complex") }

// Rsqrt returns 1/sqrt(x) elementwise.
func (f *Function) Rsqrt(x Value) Value { return f.unary("rsqrt", x, inexact, "float or complex") }

// Tanh returns the hyperbolic tangent elementwise.
func (f *Function) Tanh(x Value) Value { return f.unary("tanh", x, inexact, "float or complex") }

// Logistic returns 1/(1+exp(-x)) elementwise (the sigmoid).
func (f *Function) Logistic(x Value) Value {
	return f.unary("logistic", x, inexact, "float or complex")
}

// Floor rounds toward negative infinity elementwise.
func (f *Function) Floor(x Value) Value { return f.unary("floor", x, floating, "float") }

// Ceil rounds toward positive infinity elementwise.
func (f *Function) Ceil(x Value) Value { return f.unary("ceil", x, floating, "float") }

// Sign returns -1, 0 or 1 elementwise; x is signed integer or float.
func (f *Function) Sign(x Value) Value {
	return f.unary("sign", x, signedOrFloat, "signed integer or float")
}

// Not returns the logical (pred) or bitwise (integer) negation elementwise.
func (f *Function) Not(x Value) Value { return f.unary("not", x, intOrPred, "integer or pred") }

// Cos returns the cosine elementwise (stablehlo.cosine).
func (f *Function) Cos(x Value) Value { return f.unary("cosine", x, inexact, "float or complex") }

// Sin returns the sine elementwise (stablehlo.sine).
func (f *Function) Sin(x Value) Value { return f.unary("sine", x, inexact, "float or complex") }

// pair checks two operands of an elementwise op and makes their types equal: a weak
// constant takes the other operand's type, and a rank-0 operand is broadcast to the other
// operand's shape. Other shape differences are errors wrapping ErrShape.
func (f *Function) pair(opName string, x, y Value) (a, b *value, ok bool) {
	vs, ok := f.check(opName, x, y)
	if !ok {
		return nil, nil, false
	}
	a, b = vs[0], vs[1]
	switch {
	case a.weak != nil && b.weak != nil:
		a = f.materialize(a, a.shape)
		b = f.materialize(b, b.shape)
	case a.weak != nil:
		a = f.materialize(a, b.shape)
	case b.weak != nil:
		b = f.materialize(b, a.shape)
	}
	if f.failed() {
		return nil, nil, false
	}
	if a.shape.DType() != b.shape.DType() {
		f.failf(opName, 1, b, ErrDType, "operand types differ: %v vs %v", a.shape, b.shape)
		return nil, nil, false
	}
	if !slices.Equal(a.shape.Dims(), b.shape.Dims()) {
		switch {
		case a.shape.Rank() == 0:
			a = f.broadcastScalar(a, b.shape)
		case b.shape.Rank() == 0:
			b = f.broadcastScalar(b, a.shape)
		default:
			f.failf(opName, 1, b, ErrShape, "operand shapes differ: %v vs %v", a.shape, b.shape)
			return nil, nil, false
		}
	}
	return a, b, true
}

func (f *Function) broadcastScalar(v *value, s Shape) *value {
	return f.emit("stablehlo.broadcast_in_dim", []*value{v}, s.WithDType(v.shape.DType()), BroadcastParams{}).v
}

func (f *Function) binary(opName string, x, y Value, allow func(DType) bool, what string) Value {
	a, b, ok := f.pair(opName, x, y)
	if !ok {
		return Value{}
	}
	if !allow(a.shape.DType()) {
		f.failf(opName, 0, a, ErrDType, "%s needs %s operands, got %s", opName, what, dtypeName(a.shape.DType()))
		return Value{}
	}
	return f.emit("stablehlo."+opName, []*value{a, b}, a.shape, nil)
}

// Add returns x + y elementwise. As in every binary op, a rank-0 operand is broadcast to
// the other's shape and a weak constant takes the other's type.
func (f *Function) Add(x, y Value) Value { return f.binary("add", x, y, anyType, "") }

// Sub returns x - y elementwise (stablehlo.subtract).
func (f *Function) Sub(x, y Value) Value { return f.binary("subtract", x, y, numeric, "numeric") }

// Mul returns x * y elementwise (stablehlo.multiply).
func (f *Function) Mul(x, y Value) Value { return f.binary("multiply", x, y, anyType, "") }

// Div returns x / y elementwise (stablehlo.divide; integer division truncates).
func (f *Function) Div(x, y Value) Value { return f.binary("divide", x, y, numeric, "numeric") }

// Rem returns the remainder of x / y elementwise, with the sign of x (stablehlo.remainder).
func (f *Function) Rem(x, y Value) Value {
	return f.binary("remainder", x, y, realNum, "integer or float")
}

// Max returns the elementwise maximum (stablehlo.maximum).
func (f *Function) Max(x, y Value) Value {
	return f.binary("maximum", x, y, notComplex, "non-complex")
}

// Min returns the elementwise minimum (stablehlo.minimum).
func (f *Function) Min(x, y Value) Value {
	return f.binary("minimum", x, y, notComplex, "non-complex")
}

// Pow returns x**y elementwise (stablehlo.power).
func (f *Function) Pow(x, y Value) Value { return f.binary("power", x, y, numeric, "numeric") }

// And returns the logical (pred) or bitwise (integer) and elementwise.
func (f *Function) And(x, y Value) Value { return f.binary("and", x, y, intOrPred, "integer or pred") }

// Or returns the logical (pred) or bitwise (integer) or elementwise.
func (f *Function) Or(x, y Value) Value { return f.binary("or", x, y, intOrPred, "integer or pred") }

// Xor returns the logical (pred) or bitwise (integer) exclusive or elementwise.
func (f *Function) Xor(x, y Value) Value { return f.binary("xor", x, y, intOrPred, "integer or pred") }

// Comparison is the direction of Compare.
type Comparison uint8

// Comparison directions.
const (
	EQ Comparison = iota + 1 // ==
	NE                       // !=
	LT                       // <
	LE                       // <=
	GT                       // >
	GE                       // >=
)

// String returns "EQ", "NE", "LT", "LE", "GT" or "GE".
func (c Comparison) String() string {
	if c >= EQ && c <= GE {
		return [...]string{"", "EQ", "NE", "LT", "LE", "GT", "GE"}[c]
	}
	return "Comparison(" + strconv.Itoa(int(c)) + ")"
}

// CompareParams are the parameters of stablehlo.compare.
type CompareParams struct {
	Dir  Comparison
	Type string // compare type: "FLOAT", "SIGNED" or "UNSIGNED"
}

// Properties returns "comparison_direction = ..., compare_type = ...".
func (p CompareParams) Properties() string {
	return "comparison_direction = #stablehlo<comparison_direction " + p.Dir.String() + ">, compare_type = #stablehlo<comparison_type " + p.Type + ">"
}

// Compare returns the pred tensor x <dir> y elementwise (Params: CompareParams). The
// compare type follows the element type: FLOAT, SIGNED, or UNSIGNED (for unsigned integers
// and pred).
func (f *Function) Compare(x, y Value, dir Comparison) Value {
	const opName = "compare"
	a, b, ok := f.pair(opName, x, y)
	if !ok {
		return Value{}
	}
	if dir < EQ || dir > GE {
		f.failf(opName, -1, nil, ErrDType, "invalid comparison direction %v", dir)
		return Value{}
	}
	typ := "UNSIGNED"
	switch d := a.shape.DType(); {
	case shapes.IsComplex(d) && dir != EQ && dir != NE:
		f.failf(opName, 0, a, ErrDType, "complex values compare only for EQ and NE, not %v", dir)
		return Value{}
	case shapes.IsFloat(d) || shapes.IsComplex(d):
		typ = "FLOAT"
	case signed(d):
		typ = "SIGNED"
	}
	return f.emit("stablehlo.compare", []*value{a, b}, a.shape.WithDType(dtypes.Bool), CompareParams{Dir: dir, Type: typ})
}

// Equal returns x == y elementwise; shorthand for Compare(x, y, EQ).
func (f *Function) Equal(x, y Value) Value { return f.Compare(x, y, EQ) }

// Less returns x < y elementwise; shorthand for Compare(x, y, LT).
func (f *Function) Less(x, y Value) Value { return f.Compare(x, y, LT) }

// Greater returns x > y elementwise; shorthand for Compare(x, y, GT).
func (f *Function) Greater(x, y Value) Value { return f.Compare(x, y, GT) }

// Select returns onTrue where pred is true and onFalse elsewhere. pred is a pred tensor of
// the operands' shape or a pred scalar; onTrue and onFalse have the same type (a weak
// constant takes the other's type).
func (f *Function) Select(pred, onTrue, onFalse Value) Value {
	const opName = "select"
	vs, ok := f.check(opName, pred)
	if !ok {
		return Value{}
	}
	p := f.materialize(vs[0], vs[0].shape)
	t, e, ok := f.pair(opName, onTrue, onFalse)
	if !ok {
		return Value{}
	}
	if p.shape.DType() != dtypes.Bool {
		f.failf(opName, 0, p, ErrDType, "predicate must be pred, got %v", p.shape)
		return Value{}
	}
	if p.shape.Rank() != 0 && !slices.Equal(p.shape.Dims(), t.shape.Dims()) {
		f.failf(opName, 0, p, ErrShape, "predicate shape %v does not match operand shape %v", p.shape, t.shape)
		return Value{}
	}
	return f.emit("stablehlo.select", []*value{p, t, e}, t.shape, nil)
}

// Convert returns x converted elementwise to element type d.
func (f *Function) Convert(x Value, d DType) Value {
	const opName = "convert"
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	if !supported(d) {
		f.failf(opName, -1, nil, ErrDType, "invalid target type %s", dtypeName(d))
		return Value{}
	}
	a := vs[0]
	if a.weak != nil {
		return Value{f.materialize(a, NewShape(d))}
	}
	if shapes.IsComplex(a.shape.DType()) && !shapes.IsComplex(d) {
		f.failf(opName, 0, a, ErrDType, "converting %s to %s would drop the imaginary part; take Real first",
			dtypeName(a.shape.DType()), dtypeName(d))
		return Value{}
	}
	return f.emit("stablehlo.convert", []*value{a}, a.shape.WithDType(d), nil)
}
