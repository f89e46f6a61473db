package lower

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
)

// dtype classes accepted by elementwise ops.
func anyType(DType) bool         { return true }
func numeric(d DType) bool       { return d.IsInt() || d.IsFloat() }
func floating(d DType) bool      { return d.IsFloat() }
func intOrPred(d DType) bool     { return d.IsInt() || d == dtypes.Bool }
func signedOrFloat(d DType) bool { return signed(d) || d.IsFloat() }

func (f *Function) unary(opName string, x Value, allow func(DType) bool, what string) Value {
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	a := f.materialize(vs[0], vs[0].shape)
	if f.failed() {
		return Value{}
	}
	if !allow(a.shape.dtype) {
		f.failf(opName, 0, a, ErrDType, "%s needs %s operands, got %s", opName, what, dtypeName(a.shape.dtype))
		return Value{}
	}
	return f.emit("stablehlo."+opName, []*value{a}, a.shape, "")
}

// Neg returns -x elementwise (stablehlo.negate).
func (f *Function) Neg(x Value) Value { return f.unary("negate", x, numeric, "numeric") }

// Abs returns |x| elementwise; x is signed integer or float.
func (f *Function) Abs(x Value) Value {
	return f.unary("abs", x, signedOrFloat, "signed integer or float")
}

// Exp returns e**x elementwise (stablehlo.exponential).
func (f *Function) Exp(x Value) Value { return f.unary("exponential", x, floating, "float") }

// Log returns the natural logarithm elementwise.
func (f *Function) Log(x Value) Value { return f.unary("log", x, floating, "float") }

// Sqrt returns the square root elementwise.
func (f *Function) Sqrt(x Value) Value { return f.unary("sqrt", x, floating, "float") }

// Rsqrt returns 1/sqrt(x) elementwise.
func (f *Function) Rsqrt(x Value) Value { return f.unary("rsqrt", x, floating, "float") }

// Tanh returns the hyperbolic tangent elementwise.
func (f *Function) Tanh(x Value) Value { return f.unary("tanh", x, floating, "float") }

// Logistic returns 1/(1+exp(-x)) elementwise (the sigmoid).
func (f *Function) Logistic(x Value) Value { return f.unary("logistic", x, floating, "float") }

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
func (f *Function) Cos(x Value) Value { return f.unary("cosine", x, floating, "float") }

// Sin returns the sine elementwise (stablehlo.sine).
func (f *Function) Sin(x Value) Value { return f.unary("sine", x, floating, "float") }

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
	if a.shape.dtype != b.shape.dtype {
		f.failf(opName, 1, b, ErrDType, "operand types differ: %v vs %v", a.shape, b.shape)
		return nil, nil, false
	}
	if !slices.Equal(a.shape.dims, b.shape.dims) {
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
	return f.emit("stablehlo.broadcast_in_dim", []*value{v}, s.WithDType(v.shape.dtype), "broadcast_dimensions = array<i64>").v
}

func (f *Function) binary(opName string, x, y Value, allow func(DType) bool, what string) Value {
	a, b, ok := f.pair(opName, x, y)
	if !ok {
		return Value{}
	}
	if !allow(a.shape.dtype) {
		f.failf(opName, 0, a, ErrDType, "%s needs %s operands, got %s", opName, what, dtypeName(a.shape.dtype))
		return Value{}
	}
	return f.emit("stablehlo."+opName, []*value{a, b}, a.shape, "")
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
func (f *Function) Rem(x, y Value) Value { return f.binary("remainder", x, y, numeric, "numeric") }

// Max returns the elementwise maximum (stablehlo.maximum).
func (f *Function) Max(x, y Value) Value { return f.binary("maximum", x, y, anyType, "") }

// Min returns the elementwise minimum (stablehlo.minimum).
func (f *Function) Min(x, y Value) Value { return f.binary("minimum", x, y, anyType, "") }

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

// Compare returns the pred tensor x <dir> y elementwise. The compare type follows the
// element type: FLOAT, SIGNED, or UNSIGNED (for unsigned integers and pred).
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
	switch {
	case a.shape.dtype.IsFloat():
		typ = "FLOAT"
	case signed(a.shape.dtype):
		typ = "SIGNED"
	}
	props := "comparison_direction = #stablehlo<comparison_direction " + dir.String() + ">, compare_type = #stablehlo<comparison_type " + typ + ">"
	return f.emit("stablehlo.compare", []*value{a, b}, a.shape.WithDType(dtypes.Bool), props)
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
	if p.shape.dtype != dtypes.Bool {
		f.failf(opName, 0, p, ErrDType, "predicate must be pred, got %v", p.shape)
		return Value{}
	}
	if p.shape.Rank() != 0 && !slices.Equal(p.shape.dims, t.shape.dims) {
		f.failf(opName, 0, p, ErrShape, "predicate shape %v does not match operand shape %v", p.shape, t.shape)
		return Value{}
	}
	return f.emit("stablehlo.select", []*value{p, t, e}, t.shape, "")
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
	return f.emit("stablehlo.convert", []*value{a}, a.shape.WithDType(d), "")
}

// BroadcastInDim returns x broadcast to the shape dims: operand dimension i maps to result
// dimension broadcastDims[i] and must be 1 or equal to it.
func (f *Function) BroadcastInDim(x Value, dims []int, broadcastDims []int) Value {
	const opName = "broadcast_in_dim"
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	a := f.materialize(vs[0], vs[0].shape)
	out := NewShape(a.shape.dtype, dims...)
	if err := out.valid(); err != nil {
		f.fail(opName, -1, nil, err)
		return Value{}
	}
	if len(broadcastDims) != a.shape.Rank() {
		f.failf(opName, 0, a, ErrShape, "broadcast_dimensions %v has %d entries for operand rank %d", broadcastDims, len(broadcastDims), a.shape.Rank())
		return Value{}
	}
	seen := make([]bool, len(dims))
	for i, d := range broadcastDims {
		if d < 0 || d >= len(dims) || seen[d] {
			f.failf(opName, 0, a, ErrShape, "broadcast_dimensions %v: entry %d out of range or repeated for result rank %d", broadcastDims, d, len(dims))
			return Value{}
		}
		seen[d] = true
		if a.shape.dims[i] != 1 && a.shape.dims[i] != dims[d] {
			f.failf(opName, 0, a, ErrShape, "operand dimension %d (size %d) cannot broadcast to result dimension %d (size %d)", i, a.shape.dims[i], d, dims[d])
			return Value{}
		}
	}
	return f.emit("stablehlo.broadcast_in_dim", []*value{a}, out, "broadcast_dimensions = "+i64Array(broadcastDims))
}

// BroadcastTo broadcasts x to dims with NumPy's rule: x's dimensions align with the
// trailing dimensions of dims and each is 1 or equal.
func (f *Function) BroadcastTo(x Value, dims ...int) Value {
	if _, ok := f.check("broadcast_in_dim", x); !ok {
		return Value{}
	}
	r := x.v.shape.Rank()
	if x.v.weak != nil {
		r = 0
	}
	if r > len(dims) {
		f.failf("broadcast_in_dim", 0, x.v, ErrShape, "cannot broadcast rank %d to rank %d", r, len(dims))
		return Value{}
	}
	bd := make([]int, r)
	for i := range bd {
		bd[i] = len(dims) - r + i
	}
	return f.BroadcastInDim(x, dims, bd)
}

// Reshape returns x with new dims holding the same number of elements.
func (f *Function) Reshape(x Value, dims ...int) Value {
	const opName = "reshape"
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	a := f.materialize(vs[0], vs[0].shape)
	out := NewShape(a.shape.dtype, dims...)
	if err := out.valid(); err != nil {
		f.fail(opName, -1, nil, err)
		return Value{}
	}
	if out.Size() != a.shape.Size() {
		f.failf(opName, 0, a, ErrShape, "cannot reshape %v (%d elements) to %v (%d elements)", a.shape, a.shape.Size(), out, out.Size())
		return Value{}
	}
	return f.emit("stablehlo.reshape", []*value{a}, out, "")
}

// Transpose permutes x's dimensions: result dimension i is operand dimension perm[i].
func (f *Function) Transpose(x Value, perm ...int) Value {
	const opName = "transpose"
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	a := vs[0]
	if !isPermutation(perm, a.shape.Rank()) {
		f.failf(opName, 0, a, ErrShape, "permutation %v is not a permutation of rank %d", perm, a.shape.Rank())
		return Value{}
	}
	dims := make([]int, len(perm))
	for i, p := range perm {
		dims[i] = a.shape.dims[p]
	}
	return f.emit("stablehlo.transpose", []*value{a}, NewShape(a.shape.dtype, dims...), "permutation = "+i64Array(perm))
}

func isPermutation(p []int, n int) bool {
	if len(p) != n {
		return false
	}
	seen := make([]bool, n)
	for _, x := range p {
		if x < 0 || x >= n || seen[x] {
			return false
		}
		seen[x] = true
	}
	return true
}

// Slice returns x[start:limit:strides] per dimension; nil strides means all 1.
func (f *Function) Slice(x Value, start, limit, strides []int) Value {
	const opName = "slice"
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	a := vs[0]
	r := a.shape.Rank()
	if strides == nil {
		strides = slices.Repeat([]int{1}, r)
	}
	if len(start) != r || len(limit) != r || len(strides) != r {
		f.failf(opName, 0, a, ErrShape, "start %v, limit %v, strides %v need %d entries each for %v", start, limit, strides, r, a.shape)
		return Value{}
	}
	dims := make([]int, r)
	for i := range r {
		if start[i] < 0 || limit[i] < start[i] || limit[i] > a.shape.dims[i] || strides[i] < 1 {
			f.failf(opName, 0, a, ErrShape, "dimension %d: slice [%d:%d:%d] out of range for size %d", i, start[i], limit[i], strides[i], a.shape.dims[i])
			return Value{}
		}
		n := limit[i] - start[i] // 0 <= n <= the dimension's size
		dims[i] = n / strides[i]
		if n%strides[i] != 0 {
			dims[i]++
		}
	}
	props := "limit_indices = " + i64Array(limit) + ", start_indices = " + i64Array(start) + ", strides = " + i64Array(strides)
	return f.emit("stablehlo.slice", []*value{a}, NewShape(a.shape.dtype, dims...), props)
}

// indices checks the scalar integer start indices of dynamic_slice/dynamic_update_slice.
func (f *Function) indices(opName string, first int, starts []Value, rank int) ([]*value, bool) {
	vs, ok := f.check(opName, starts...)
	if !ok {
		return nil, false
	}
	if len(vs) != rank {
		f.failf(opName, -1, nil, ErrShape, "%d start indices for rank %d", len(vs), rank)
		return nil, false
	}
	var d DType
	for i, v := range vs {
		if v.weak != nil {
			v = f.materialize(v, NewShape(dtypes.Int32))
			vs[i] = v
		}
		if v.shape.Rank() != 0 || !v.shape.dtype.IsInt() {
			f.failf(opName, first+i, v, ErrShape, "start index must be an integer scalar, got %v", v.shape)
			return nil, false
		}
		if i > 0 && v.shape.dtype != d {
			f.failf(opName, first+i, v, ErrDType, "start indices differ in type: %s vs %s", dtypeName(d), dtypeName(v.shape.dtype))
			return nil, false
		}
		d = v.shape.dtype
	}
	return vs, !f.failed()
}

// DynamicSlice returns the block of x of the given sizes starting at the scalar integer
// indices starts (clamped into range at run time, as in XLA).
func (f *Function) DynamicSlice(x Value, starts []Value, sizes []int) Value {
	const opName = "dynamic_slice"
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	a := vs[0]
	idx, ok := f.indices(opName, 1, starts, a.shape.Rank())
	if !ok {
		return Value{}
	}
	if len(sizes) != a.shape.Rank() {
		f.failf(opName, 0, a, ErrShape, "slice_sizes %v for rank %d", sizes, a.shape.Rank())
		return Value{}
	}
	for i, s := range sizes {
		if s < 0 || s > a.shape.dims[i] {
			f.failf(opName, 0, a, ErrShape, "slice size %d out of range for dimension %d of size %d", s, i, a.shape.dims[i])
			return Value{}
		}
	}
	return f.emit("stablehlo.dynamic_slice", append([]*value{a}, idx...), NewShape(a.shape.dtype, sizes...), "slice_sizes = "+i64Array(sizes))
}

// DynamicUpdateSlice returns x with update written at the scalar integer indices starts.
func (f *Function) DynamicUpdateSlice(x, update Value, starts []Value) Value {
	const opName = "dynamic_update_slice"
	vs, ok := f.check(opName, x, update)
	if !ok {
		return Value{}
	}
	a, u := vs[0], vs[1]
	u = f.materialize(u, u.shape.WithDType(a.shape.dtype))
	idx, ok := f.indices(opName, 2, starts, a.shape.Rank())
	if !ok {
		return Value{}
	}
	if u.shape.dtype != a.shape.dtype || u.shape.Rank() != a.shape.Rank() {
		f.failf(opName, 1, u, ErrShape, "update %v does not fit operand %v", u.shape, a.shape)
		return Value{}
	}
	for i := range u.shape.dims {
		if u.shape.dims[i] > a.shape.dims[i] {
			f.failf(opName, 1, u, ErrShape, "update %v larger than operand %v in dimension %d", u.shape, a.shape, i)
			return Value{}
		}
	}
	return f.emit("stablehlo.dynamic_update_slice", append([]*value{a, u}, idx...), a.shape, "")
}

// Concatenate joins xs along dimension dim; all other dimensions must agree.
func (f *Function) Concatenate(dim int, xs ...Value) Value {
	const opName = "concatenate"
	vs, ok := f.check(opName, xs...)
	if !ok {
		return Value{}
	}
	if len(vs) == 0 {
		f.failf(opName, -1, nil, ErrShape, "no operands")
		return Value{}
	}
	first := vs[0]
	if dim < 0 || dim >= first.shape.Rank() {
		f.failf(opName, 0, first, ErrShape, "dimension %d out of range for %v", dim, first.shape)
		return Value{}
	}
	dims := first.shape.Dims()
	for i, v := range vs[1:] {
		s := v.shape
		if s.dtype != first.shape.dtype || s.Rank() != first.shape.Rank() {
			f.failf(opName, i+1, v, ErrShape, "operand %v does not match %v", s, first.shape)
			return Value{}
		}
		for d := range s.dims {
			if d != dim && s.dims[d] != dims[d] {
				f.failf(opName, i+1, v, ErrShape, "dimension %d is %d, want %d (%v vs %v)", d, s.dims[d], dims[d], s, first.shape)
				return Value{}
			}
		}
		n, ok := addDims(dims[dim], s.dims[dim])
		if !ok {
			f.failf(opName, i+1, v, ErrShape, "concatenated dimension %d overflows int64", dim)
			return Value{}
		}
		dims[dim] = n
	}
	return f.emit("stablehlo.concatenate", vs, NewShape(first.shape.dtype, dims...), "dimension = "+strconv.Itoa(dim)+" : i64")
}

// Pad pads x with the scalar padValue: low and high elements before and after each
// dimension (negative values crop), and interior elements between neighbours (nil interior
// means none).
func (f *Function) Pad(x, padValue Value, low, high, interior []int) Value {
	const opName = "pad"
	vs, ok := f.check(opName, x, padValue)
	if !ok {
		return Value{}
	}
	a := vs[0]
	pv := f.materialize(vs[1], a.shape.scalar())
	r := a.shape.Rank()
	if interior == nil {
		interior = make([]int, r)
	}
	if pv.shape.dtype != a.shape.dtype || pv.shape.Rank() != 0 {
		f.failf(opName, 1, pv, ErrShape, "padding value must be a %s scalar, got %v", dtypeName(a.shape.dtype), pv.shape)
		return Value{}
	}
	if len(low) != r || len(high) != r || len(interior) != r {
		f.failf(opName, 0, a, ErrShape, "low %v, high %v, interior %v need %d entries each", low, high, interior, r)
		return Value{}
	}
	dims := make([]int, r)
	for i, d := range a.shape.dims {
		if interior[i] < 0 {
			f.failf(opName, 0, a, ErrShape, "negative interior padding %d in dimension %d", interior[i], i)
			return Value{}
		}
		grown, ok1 := mulDims(max(d-1, 0), interior[i])
		n, ok2 := addDims(d, grown)
		n, ok3 := addDims(n, low[i])
		n, ok4 := addDims(n, high[i])
		if !ok1 || !ok2 || !ok3 || !ok4 {
			f.failf(opName, 0, a, ErrShape, "dimension %d: size %d padded by low %d, high %d, interior %d overflows int64", i, d, low[i], high[i], interior[i])
			return Value{}
		}
		if n < 0 {
			f.failf(opName, 0, a, ErrShape, "dimension %d would have negative size %d", i, n)
			return Value{}
		}
		dims[i] = n
	}
	props := "edge_padding_high = " + i64Array(high) + ", edge_padding_low = " + i64Array(low) + ", interior_padding = " + i64Array(interior)
	return f.emit("stablehlo.pad", []*value{a, pv}, NewShape(a.shape.dtype, dims...), props)
}

// DotDims are the dimension numbers of DotGeneral.
type DotDims struct {
	LhsBatch, RhsBatch             []int // batch dimensions, paired in order
	LhsContracting, RhsContracting []int // contracted dimensions, paired in order
}

// DotGeneral contracts lhs and rhs. The result dimensions are the batch dimensions, then
// lhs's free dimensions, then rhs's free dimensions, each in order.
func (f *Function) DotGeneral(lhs, rhs Value, d DotDims) Value {
	const opName = "dot_general"
	vs, ok := f.check(opName, lhs, rhs)
	if !ok {
		return Value{}
	}
	a, b := vs[0], vs[1]
	if a.shape.dtype != b.shape.dtype {
		f.failf(opName, 1, b, ErrDType, "operand types differ: %v vs %v", a.shape, b.shape)
		return Value{}
	}
	if len(d.LhsBatch) != len(d.RhsBatch) || len(d.LhsContracting) != len(d.RhsContracting) {
		f.failf(opName, -1, nil, ErrShape, "batch %v x %v or contracting %v x %v dimension lists differ in length", d.LhsBatch, d.RhsBatch, d.LhsContracting, d.RhsContracting)
		return Value{}
	}
	usedA := make([]bool, a.shape.Rank())
	usedB := make([]bool, b.shape.Rank())
	pairs := func(xs, ys []int, kind string) bool {
		for i := range xs {
			x, y := xs[i], ys[i]
			if x < 0 || x >= len(usedA) || usedA[x] {
				f.failf(opName, 0, a, ErrShape, "%s dimension %d out of range or repeated for %v", kind, x, a.shape)
				return false
			}
			if y < 0 || y >= len(usedB) || usedB[y] {
				f.failf(opName, 1, b, ErrShape, "%s dimension %d out of range or repeated for %v", kind, y, b.shape)
				return false
			}
			usedA[x], usedB[y] = true, true
			if a.shape.dims[x] != b.shape.dims[y] {
				f.failf(opName, 1, b, ErrShape, "%s dimension sizes differ: lhs dimension %d is %d, rhs dimension %d is %d", kind, x, a.shape.dims[x], y, b.shape.dims[y])
				return false
			}
		}
		return true
	}
	if !pairs(d.LhsBatch, d.RhsBatch, "batch") || !pairs(d.LhsContracting, d.RhsContracting, "contracting") {
		return Value{}
	}
	var dims []int
	for _, x := range d.LhsBatch {
		dims = append(dims, a.shape.dims[x])
	}
	for i, u := range usedA {
		if !u {
			dims = append(dims, a.shape.dims[i])
		}
	}
	for i, u := range usedB {
		if !u {
			dims = append(dims, b.shape.dims[i])
		}
	}
	var p strings.Builder
	p.WriteString("dot_dimension_numbers = #stablehlo.dot<")
	sep := ""
	for _, fld := range []struct {
		name string
		xs   []int
	}{{"lhs_batching_dimensions", d.LhsBatch}, {"rhs_batching_dimensions", d.RhsBatch},
		{"lhs_contracting_dimensions", d.LhsContracting}, {"rhs_contracting_dimensions", d.RhsContracting}} {
		if len(fld.xs) == 0 {
			continue
		}
		p.WriteString(sep)
		p.WriteString(fld.name)
		p.WriteString(" = ")
		p.WriteString(intList(fld.xs))
		sep = ", "
	}
	p.WriteString(">")
	return f.emit("stablehlo.dot_general", []*value{a, b}, NewShape(a.shape.dtype, dims...), p.String())
}

// MatMul multiplies two rank-2 tensors: [m, k] x [k, n] -> [m, n].
func (f *Function) MatMul(lhs, rhs Value) Value {
	if _, ok := f.check("dot_general", lhs, rhs); !ok {
		return Value{}
	}
	if lhs.v.shape.Rank() != 2 || rhs.v.shape.Rank() != 2 {
		f.failf("dot_general", 0, lhs.v, ErrShape, "MatMul needs rank-2 operands, got %v and %v", lhs.v.shape, rhs.v.shape)
		return Value{}
	}
	return f.DotGeneral(lhs, rhs, DotDims{LhsContracting: []int{1}, RhsContracting: []int{0}})
}

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

// newRegion returns an empty region body nested in f.
func (f *Function) newRegion() *Function {
	return &Function{m: f.m, name: f.name, top: f.top, parent: f}
}

// scalarRegion builds the two-argument scalar body `^bb0(%a, %b): r(%a, %b)`.
func (f *Function) scalarRegion(r Reduction, d DType) *Function {
	g := f.newRegion()
	s := NewShape(d)
	a, b := g.newArg(s), g.newArg(s)
	g.args = []*value{a, b}
	res := g.emit(r.op(), []*value{a, b}, s, "")
	g.results = []*value{res.v}
	g.returned = true
	return g
}

// Reduce reduces x over dims with r, starting from r's identity (0 for Sum, 1 for Prod,
// -inf or the lowest integer for Max, +inf or the highest integer for Min).
func (f *Function) Reduce(x Value, r Reduction, dims ...int) Value {
	const opName = "reduce"
	vs, ok := f.check(opName, x)
	if !ok {
		return Value{}
	}
	a := f.materialize(vs[0], vs[0].shape)
	if r < Sum || r > Min {
		f.failf(opName, -1, nil, ErrDType, "invalid reduction %v", r)
		return Value{}
	}
	if a.shape.dtype == dtypes.Bool {
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
	for i, d := range a.shape.dims {
		if !reduced[i] {
			out = append(out, d)
		}
	}
	init := f.constant(opName, a.shape.scalar(), []lit{r.init(a.shape.dtype)})
	if init.v == nil {
		return Value{}
	}
	sorted := slices.Clone(dims)
	slices.Sort(sorted)
	o := &op{name: "stablehlo.reduce", operands: []*value{a, init.v}, props: "dimensions = " + i64Array(sorted),
		regions: []*Function{f.scalarRegion(r, a.shape.dtype)}}
	return f.emitMulti(o, []Shape{NewShape(a.shape.dtype, out...)})[0]
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
