package stablehlo

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// lit is one scalar literal: an int, uint, float, complex or bool read from a Go value.
type lit struct {
	kind byte // 'i', 'u', 'f', 'c' (f the real part, im the imaginary one), 'b'; 'x': none (see Reduction.init)
	i    int64
	u    uint64
	f    float64
	im   float64
	b    bool
}

// weakConst is a Go untyped-style scalar (int, float64, bool) whose element type is taken
// from the operand it meets, like a Python scalar in JAX.
type weakConst struct{ lit lit }

func (w *weakConst) text() string {
	switch w.lit.kind {
	case 'i':
		return strconv.FormatInt(w.lit.i, 10)
	case 'f':
		return strconv.FormatFloat(w.lit.f, 'g', -1, 64)
	case 'b':
		return strconv.FormatBool(w.lit.b)
	}
	return "?"
}

// litOf reads a Go scalar. weak reports whether it is one of the untyped-constant default
// types (int, float64, bool).
func litOf(x any) (l lit, d DType, weak bool, ok bool) {
	switch v := x.(type) {
	case bool:
		return lit{kind: 'b', b: v}, dtypes.Bool, true, true
	case int:
		return lit{kind: 'i', i: int64(v)}, dtypes.Int64, true, true
	case float64:
		return lit{kind: 'f', f: v}, dtypes.Float64, true, true
	case int8:
		return lit{kind: 'i', i: int64(v)}, dtypes.Int8, false, true
	case int16:
		return lit{kind: 'i', i: int64(v)}, dtypes.Int16, false, true
	case int32:
		return lit{kind: 'i', i: int64(v)}, dtypes.Int32, false, true
	case int64:
		return lit{kind: 'i', i: v}, dtypes.Int64, false, true
	case uint8:
		return lit{kind: 'u', u: uint64(v)}, dtypes.Uint8, false, true
	case uint16:
		return lit{kind: 'u', u: uint64(v)}, dtypes.Uint16, false, true
	case uint32:
		return lit{kind: 'u', u: uint64(v)}, dtypes.Uint32, false, true
	case uint64:
		return lit{kind: 'u', u: v}, dtypes.Uint64, false, true
	case uint:
		return lit{kind: 'u', u: uint64(v)}, dtypes.Uint64, false, true
	case float32:
		return lit{kind: 'f', f: float64(v)}, dtypes.Float32, false, true
	case complex64:
		return lit{kind: 'c', f: float64(real(v)), im: float64(imag(v))}, dtypes.Complex64, false, true
	case complex128:
		return lit{kind: 'c', f: real(v), im: imag(v)}, dtypes.Complex128, false, true
	}
	return lit{}, 0, false, false
}

// format writes l as an element of type d, checking that it is representable.
func (l lit) format(b *strings.Builder, d DType) error {
	switch {
	case d == dtypes.Bool:
		if l.kind != 'b' {
			return fmt.Errorf("%w: numeric constant for pred", ErrDType)
		}
		b.WriteString(strconv.FormatBool(l.b))
		return nil
	case l.kind == 'b':
		return fmt.Errorf("%w: bool constant for %s", ErrDType, dtypeName(d))
	case l.kind == 'x' || l.kind == 0:
		return fmt.Errorf("%w: no identity element of type %s for this reduction", ErrDType, dtypeName(d))
	case l.kind == 'c' && !shapes.IsComplex(d):
		return fmt.Errorf("%w: complex constant for %s", ErrDType, dtypeName(d))
	case shapes.IsComplex(d):
		part, re := realOf(d), l
		if re.kind == 'c' {
			re = lit{kind: 'f', f: l.f}
		}
		b.WriteByte('(')
		if err := re.format(b, part); err != nil {
			return err
		}
		b.WriteString(", ")
		formatFloat(b, l.im, part)
		b.WriteByte(')')
		return nil
	case shapes.IsFloat(d):
		f := l.f
		switch l.kind {
		case 'i':
			f = float64(l.i)
		case 'u':
			f = float64(l.u)
		}
		if !wideFloat(d) {
			return formatNarrowFloat(b, f, d)
		}
		formatFloat(b, f, d)
		return nil
	}
	// integer types
	var lo int64
	var hi uint64
	bits := shapes.Bits(d)
	if signed(d) {
		lo, hi = -1<<(bits-1), 1<<(bits-1)-1
	} else {
		hi = math.MaxUint64 >> (64 - bits)
	}
	switch l.kind {
	case 'f':
		if l.f != math.Trunc(l.f) || math.IsInf(l.f, 0) || math.IsNaN(l.f) {
			return fmt.Errorf("%w: constant %v is not an integer (element type %s)", ErrDType, l.f, dtypeName(d))
		}
		if l.f < 0 {
			return lit{kind: 'i', i: int64(l.f)}.format(b, d)
		}
		return lit{kind: 'u', u: uint64(l.f)}.format(b, d)
	case 'i':
		if l.i < lo || (l.i > 0 && uint64(l.i) > hi) {
			return fmt.Errorf("%w: constant %d overflows %s", ErrDType, l.i, dtypeName(d))
		}
		b.WriteString(strconv.FormatInt(l.i, 10))
	case 'u':
		if l.u > hi {
			return fmt.Errorf("%w: constant %d overflows %s", ErrDType, l.u, dtypeName(d))
		}
		b.WriteString(strconv.FormatUint(l.u, 10))
	}
	return nil
}

// narrowMax holds the largest finite value of each float8 type and f4E2M1FN.
var narrowMax = map[DType]float64{
	dtypes.F8E5M2: 57344, dtypes.F8E4M3FN: 448, dtypes.F8E4M3B11FNUZ: 30, dtypes.F8E5M2FNUZ: 57344,
	dtypes.F8E4M3FNUZ: 240, dtypes.F8E4M3: 240, dtypes.F8E3M4: 15.5, dtypes.F8E8M0FNU: 0x1p127, dtypes.F4E2M1FN: 6,
}

// formatNarrowFloat writes f as a literal of a float8 type or f4E2M1FN, which MLIR rounds to
// the nearest value of the type. NaN, infinities and values beyond the type's largest finite
// one are refused (each type encodes them its own way, or not at all), as is a value that is
// not positive for f8E8M0FNU (powers of two only).
func formatNarrowFloat(b *strings.Builder, f float64, d DType) error {
	if math.IsNaN(f) || math.Abs(f) > narrowMax[d] || d == dtypes.F8E8M0FNU && f <= 0 {
		return fmt.Errorf("%w: constant %v is not a finite %s (largest %v)", ErrDType, f, dtypeName(d), narrowMax[d])
	}
	formatFloat(b, f, dtypes.Float32)
	return nil
}

// formatFloat writes f as an MLIR float literal of type d: decimal with a '.', or the
// hexadecimal bit pattern for NaN and infinities.
func formatFloat(b *strings.Builder, f float64, d DType) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		var nan, pinf, ninf string
		switch d {
		case dtypes.Float16:
			nan, pinf, ninf = "0x7E00", "0x7C00", "0xFC00"
		case dtypes.BFloat16:
			nan, pinf, ninf = "0x7FC0", "0x7F80", "0xFF80"
		case dtypes.Float32:
			nan, pinf, ninf = "0x7FC00000", "0x7F800000", "0xFF800000"
		default:
			nan, pinf, ninf = "0x7FF8000000000000", "0x7FF0000000000000", "0xFFF0000000000000"
		}
		switch {
		case math.IsNaN(f):
			b.WriteString(nan)
		case f > 0:
			b.WriteString(pinf)
		default:
			b.WriteString(ninf)
		}
		return
	}
	bits := 64
	if d != dtypes.Float64 {
		bits = 32
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if strings.ContainsAny(s, ".") {
		b.WriteString(s)
		return
	}
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		b.WriteString(s[:i])
		b.WriteString(".0")
		b.WriteString(s[i:])
		return
	}
	b.WriteString(s)
	b.WriteString(".0")
}

// Constant returns a scalar constant. The Go untyped-constant default types int, float64
// and bool make a weak constant: its element type is taken from the other operand of the
// op that uses it (f.Mul(x, f.Constant(2)) multiplies an f32 x by 2.0 in f32), and it is
// broadcast to that operand's shape. Used alone, it is s64, f64 or pred. Every other Go
// scalar type (float32, int32, uint8, ...) gives a constant of exactly that type. Any
// other argument records an error wrapping ErrDType.
func (f *Function) Constant(x any) Value {
	const opName = "constant"
	if _, ok := f.check(opName); !ok {
		return Value{}
	}
	l, d, weak, ok := litOf(x)
	if !ok {
		f.failf(opName, -1, nil, ErrDType, "unsupported Go type %T for a scalar constant", x)
		return Value{}
	}
	if weak {
		return Value{&value{fn: f, shape: NewShape(d), sub: -1, weak: &weakConst{lit: l}}}
	}
	return f.constant(opName, NewShape(d), []lit{l})
}

// ConstantOf returns a scalar constant of element type d holding x (any Go number or
// bool). A value d cannot represent exactly (2.5 as s32, 300 as u8) is an error wrapping
// ErrDType; floats are rounded to the nearest representable value.
func (f *Function) ConstantOf(d DType, x any) Value { return f.Full(NewShape(d), x) }

// Full returns a constant of shape s with every element equal to x (a splat).
func (f *Function) Full(s Shape, x any) Value {
	const opName = "constant"
	if _, ok := f.check(opName); !ok {
		return Value{}
	}
	if err := validShape(s); err != nil {
		f.fail(opName, -1, nil, err)
		return Value{}
	}
	l, _, _, ok := litOf(x)
	if !ok {
		f.failf(opName, -1, nil, ErrDType, "unsupported Go type %T for a constant", x)
		return Value{}
	}
	return f.constant(opName, s, []lit{l})
}

// Array returns a dense constant from a flat Go slice in row-major order with the given
// dims. The element type follows the slice: []float32 -> f32, []float64 -> f64,
// []int32 -> s32, []int64 and []int -> s64, []uint8 -> u8, []bool -> pred, and so on.
// The slice length must equal the product of dims (ErrShape).
func (f *Function) Array(flat any, dims ...int) Value {
	t := reflect.TypeOf(flat)
	if t == nil || t.Kind() != reflect.Slice {
		if _, ok := f.check("constant"); ok {
			f.failf("constant", -1, nil, ErrDType, "Array needs a slice, got %T", flat)
		}
		return Value{}
	}
	_, d, _, ok := litOf(reflect.Zero(t.Elem()).Interface())
	if !ok {
		if _, ok := f.check("constant"); ok {
			f.failf("constant", -1, nil, ErrDType, "unsupported slice type %T", flat)
		}
		return Value{}
	}
	return f.ArrayOf(d, flat, dims...)
}

// ArrayOf is Array with an explicit element type d; elements are converted with the rules
// of ConstantOf (use it for f16 and bf16 from []float32, say).
func (f *Function) ArrayOf(d DType, flat any, dims ...int) Value {
	const opName = "constant"
	if _, ok := f.check(opName); !ok {
		return Value{}
	}
	s := NewShape(d, dims...)
	if err := validShape(s); err != nil {
		f.fail(opName, -1, nil, err)
		return Value{}
	}
	rv := reflect.ValueOf(flat)
	if rv.Kind() != reflect.Slice {
		f.failf(opName, -1, nil, ErrDType, "ArrayOf needs a slice, got %T", flat)
		return Value{}
	}
	if rv.Len() != s.Size() {
		f.failf(opName, -1, nil, ErrShape, "%d elements for shape %v (%d elements)", rv.Len(), s, s.Size())
		return Value{}
	}
	lits := make([]lit, rv.Len())
	for i := range lits {
		l, _, _, ok := litOf(rv.Index(i).Interface())
		if !ok {
			f.failf(opName, -1, nil, ErrDType, "unsupported slice type %T", flat)
			return Value{}
		}
		lits[i] = l
	}
	return f.constant(opName, s, lits)
}

// constant emits stablehlo.constant of shape s: a splat for one literal, else a nested list.
func (f *Function) constant(opName string, s Shape, lits []lit) Value {
	var b strings.Builder
	b.WriteString("dense<")
	if len(lits) == 1 {
		if err := lits[0].format(&b, s.DType()); err != nil {
			f.fail(opName, -1, nil, err)
			return Value{}
		}
	} else {
		pos := 0
		if err := writeNested(&b, s.DType(), s.Dims(), lits, &pos); err != nil {
			f.fail(opName, -1, nil, err)
			return Value{}
		}
	}
	b.WriteString(">")
	r := f.newValue(s)
	o := &Op{name: "stablehlo.constant", results: []*value{r}, params: ConstantParams{Value: b.String()}, print: printConstant}
	f.ops = append(f.ops, o)
	return f.added(o, []Value{{r}})[0]
}

func writeNested(b *strings.Builder, d DType, dims []int, lits []lit, pos *int) error {
	if len(dims) == 0 {
		err := lits[*pos].format(b, d)
		*pos++
		return err
	}
	b.WriteByte('[')
	for i := range dims[0] {
		if i > 0 {
			b.WriteString(", ")
		}
		if err := writeNested(b, d, dims[1:], lits, pos); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

// ConstantParams are the parameters of stablehlo.constant: the literal as MLIR writes it,
// `dense<2.000000e+00>` for a splat or `dense<[[1, 2], [3, 4]]>`; the type is the result's.
type ConstantParams struct {
	Value string
}

func printConstant(p *Printer, o *Op) {
	p.Indent()
	p.Def(o.Results()...)
	p.WriteString("stablehlo.constant ")
	p.WriteString(o.params.(ConstantParams).Value)
	p.WriteString(" : ")
	p.Type(o.results[0].shape)
	p.WriteString("\n")
}

// materialize turns a weak constant into a constant op of shape s (its element type
// decides the literal's type); other values are returned unchanged. On error it records
// the error and returns v.
func (f *Function) materialize(v *value, s Shape) *value {
	if v == nil || v.weak == nil {
		return v
	}
	r := f.constant("constant", s, []lit{v.weak.lit})
	if r.v == nil {
		return v
	}
	return r.v
}

// IotaParams are the parameters of stablehlo.iota.
type IotaParams struct {
	Dim int
}

// Properties returns "iota_dimension = N : i64".
func (p IotaParams) Properties() string { return "iota_dimension = " + strconv.Itoa(p.Dim) + " : i64" }

// Iota returns a tensor of shape s whose elements count 0, 1, 2, ... along dimension dim
// (Params: IotaParams).
func (f *Function) Iota(s Shape, dim int) Value {
	const opName = "iota"
	if _, ok := f.check(opName); !ok {
		return Value{}
	}
	if err := validShape(s); err != nil {
		f.fail(opName, -1, nil, err)
		return Value{}
	}
	if dim < 0 || dim >= s.Rank() {
		f.failf(opName, -1, nil, ErrShape, "iota dimension %d out of range for %v", dim, s)
		return Value{}
	}
	if s.DType() == dtypes.Bool {
		f.failf(opName, -1, nil, ErrDType, "iota of pred")
		return Value{}
	}
	return f.emit("stablehlo.iota", nil, s, IotaParams{Dim: dim})
}
