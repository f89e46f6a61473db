package stablehlo

import (
	"slices"
	"strconv"
	"strings"

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

// pair checks two operands of an elementwise op, makes their element types equal (a weak
// constant takes the other operand's type) and broadcasts them to their common shape with
// NumPy's rule (see broadcastAll). Differing element types are errors wrapping ErrDType;
// shapes that do not broadcast, errors wrapping ErrShape.
// prim is the lax primitive named in that error (see broadcastMessage).
func (f *Function) pair(opName, prim string, x, y Value) (a, b *value, ok bool) {
	a, b, ok = f.pairTypes(opName, x, y)
	if !ok {
		return nil, nil, false
	}
	vs, ok := f.broadcastAll(opName, prim, []*value{a, b}, []Shape{shapeOf(x), shapeOf(y)}, nil)
	if !ok {
		return nil, nil, false
	}
	return vs[0], vs[1], true
}

// pairTypes is pair without the broadcast: the operands come back with equal element types
// and their own shapes (a weak constant takes the other's shape too).
func (f *Function) pairTypes(opName string, x, y Value) (a, b *value, ok bool) {
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
	return a, b, true
}

// shapeOf is v's shape as the caller gave it: a weak constant is a scalar.
func shapeOf(v Value) Shape {
	if v.v.weak != nil {
		return scalarOf(v.v.shape)
	}
	return v.v.shape
}

// broadcastAll broadcasts vs to their common shape under NumPy's rule, as jnp's binary and
// ternary functions do: dimensions align at the end, a missing leading dimension or one
// of size 1 stretches. Each operand whose dimensions differ from the common ones gets an
// explicit stablehlo.broadcast_in_dim (so autodiff and lower see ordinary ops). given are
// the operands' shapes as the caller gave them, for the error, which wraps ErrShape with
// JAX's message ("Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]") and names
// the first operand that does not broadcast with those before it (pos[i] is operand i's
// index in the op; nil for i). prim is the lax primitive JAX's jnp function ends in (see
// broadcastMessage), or "" for one that broadcasts all its operands first (jnp.where).
func (f *Function) broadcastAll(opName, prim string, vs []*value, given []Shape, pos []int) ([]*value, bool) {
	dims := make([][]int, len(vs))
	for i, v := range vs {
		dims[i] = v.shape.Dims()
	}
	target, err := BroadcastShapes(dims...)
	if err != nil {
		bad := len(vs) - 1
		for i := 1; i < len(vs); i++ {
			if _, err := BroadcastShapes(dims[:i+1]...); err != nil {
				bad = i
				break
			}
		}
		at := bad
		if pos != nil {
			at = pos[bad]
		}
		f.failf(opName, at, vs[bad], ErrShape, "%s", broadcastMessage(prim, given))
		return nil, false
	}
	out := slices.Clone(vs)
	for i, v := range vs {
		if slices.Equal(v.shape.Dims(), target) {
			continue
		}
		out[i] = f.broadcastTrailing(v, target)
	}
	return out, !f.failed()
}

// broadcastTrailing emits stablehlo.broadcast_in_dim of v to dims, v's dimensions aligned
// with the last ones (each 1 or equal, as BroadcastShapes checked).
func (f *Function) broadcastTrailing(v *value, dims []int) *value {
	var bd []int
	if r := v.shape.Rank(); r > 0 {
		bd = make([]int, r)
		for i := range bd {
			bd[i] = len(dims) - r + i
		}
	}
	return f.emit("stablehlo.broadcast_in_dim", []*value{v}, NewShape(v.shape.DType(), dims...), BroadcastParams{Dims: bd}).v
}

// broadcastMessage is JAX's message for operands of the given shapes that do not
// broadcast. jnp broadcasts operands of differing ranks itself with lax.broadcast_shapes
// ("Incompatible shapes for broadcasting: shapes=[(2, 3), (4,)]"); when the operands that
// are not scalars share one rank (or prim is "", as for jnp.where, which always does), the
// lax primitive prim refuses them instead ("add got incompatible shapes for broadcasting:
// (4, 2), (2, 4).", scalars left out).
func broadcastMessage(prim string, given []Shape) string {
	ranks := map[int]bool{}
	var nonScalar []string
	all := make([]string, len(given))
	for i, s := range given {
		all[i] = shapes.PyTuple(s.Dims())
		if s.Rank() > 0 {
			ranks[s.Rank()] = true
			nonScalar = append(nonScalar, all[i])
		}
	}
	if prim != "" && len(ranks) < 2 {
		return prim + " got incompatible shapes for broadcasting: " + strings.Join(nonScalar, ", ") + "."
	}
	return "Incompatible shapes for broadcasting: shapes=[" + strings.Join(all, ", ") + "]"
}

// laxNames are the lax primitives of the binary ops whose StableHLO names differ.
var laxNames = map[string]string{
	"subtract": "sub", "multiply": "mul", "divide": "div", "maximum": "max", "minimum": "min",
	"remainder": "rem", "power": "pow",
}

// laxName is the lax primitive of the binary op opName (compare: its direction, "lt").
func laxName(opName string, dir Comparison) string {
	if opName == "compare" {
		return strings.ToLower(dir.String())
	}
	if n, ok := laxNames[opName]; ok {
		return n
	}
	return opName
}

func (f *Function) binary(opName string, x, y Value, allow func(DType) bool, what string) Value {
	a, b, ok := f.pair(opName, laxName(opName, 0), x, y)
	if !ok {
		return Value{}
	}
	if !allow(a.shape.DType()) {
		f.failf(opName, 0, a, ErrDType, "%s needs %s operands, got %s", opName, what, dtypeName(a.shape.DType()))
		return Value{}
	}
	return f.emit("stablehlo."+opName, []*value{a, b}, a.shape, nil)
}

// Add returns x + y elementwise. As in every binary op, the operands broadcast with
// NumPy's rule (jnp.add's: f32[4, 1, 3] + f32[5, 1] is f32[4, 5, 3]) through explicit
// stablehlo.broadcast_in_dim ops, and a weak constant takes the other's type. Shapes that
// do not broadcast give an error wrapping ErrShape.
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

// ReluParams mark the stablehlo.maximum that nn.Relu emits (Op.Params; it prints nothing), so
// that a gradient takes jax.nn.relu's derivative, 0 at 0, instead of lax.max's, which
// splits a tie evenly. Package lower's sharding rules treat it as the maximum it is.
type ReluParams struct{}

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
	a, b, ok := f.pair(opName, laxName(opName, dir), x, y)
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

// Select returns onTrue where pred is true and onFalse elsewhere (stablehlo.select,
// jnp.where's broadcasting). pred is a pred tensor; the three operands broadcast with
// NumPy's rule, except that a scalar pred is kept as stablehlo.select takes it. onTrue
// and onFalse have the same element type (a weak constant takes the other's type).
// Shapes that do not broadcast give an error wrapping ErrShape.
func (f *Function) Select(pred, onTrue, onFalse Value) Value {
	const opName = "select"
	vs, ok := f.check(opName, pred)
	if !ok {
		return Value{}
	}
	p := f.materialize(vs[0], vs[0].shape)
	t, e, ok := f.pairTypes(opName, onTrue, onFalse)
	if !ok {
		return Value{}
	}
	if p.shape.DType() != dtypes.Bool {
		f.failf(opName, 0, p, ErrDType, "predicate must be pred, got %v", p.shape)
		return Value{}
	}
	// jnp.where's message leaves a scalar predicate out.
	ops, given := []*value{p, t, e}, []Shape{p.shape, shapeOf(onTrue), shapeOf(onFalse)}
	pos := []int{0, 1, 2}
	if p.shape.Rank() == 0 {
		ops, given, pos = ops[1:], given[1:], pos[1:]
	}
	out, ok := f.broadcastAll(opName, "", ops, given, pos)
	if !ok {
		return Value{}
	}
	if p.shape.Rank() == 0 {
		out = append([]*value{p}, out...)
	}
	return f.emit("stablehlo.select", out, out[1].shape, nil)
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
