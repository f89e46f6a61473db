package stablehlo

import (
	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

func integer(d DType) bool { return isInt(d) }

// ShiftLeft returns x << y elementwise on integers (stablehlo.shift_left, lax.shift_left);
// a shift by the bit width or more gives 0. The operands broadcast with NumPy's rule and a weak
// constant takes the other's type, as in every binary op.
func (f *Function) ShiftLeft(x, y Value) Value {
	return f.binary("shift_left", x, y, integer, "integer")
}

// ShiftRightArithmetic returns x >> y elementwise on integers, filling with the sign bit
// (stablehlo.shift_right_arithmetic, lax.shift_right_arithmetic); a shift by the bit
// width or more gives 0 or -1.
func (f *Function) ShiftRightArithmetic(x, y Value) Value {
	return f.binary("shift_right_arithmetic", x, y, integer, "integer")
}

// ShiftRightLogical returns x >> y elementwise on integers, filling with zeros
// (stablehlo.shift_right_logical, lax.shift_right_logical); a shift by the bit width or
// more gives 0.
func (f *Function) ShiftRightLogical(x, y Value) Value {
	return f.binary("shift_right_logical", x, y, integer, "integer")
}

// PopulationCount returns the number of set bits of each integer element, in x's type
// (stablehlo.popcnt, lax.population_count).
func (f *Function) PopulationCount(x Value) Value {
	return f.unary("popcnt", x, integer, "integer")
}

// CountLeadingZeros returns the number of leading zero bits of each integer element, in
// x's type (stablehlo.count_leading_zeros, lax.clz).
func (f *Function) CountLeadingZeros(x Value) Value {
	return f.unary("count_leading_zeros", x, integer, "integer")
}

// BitcastConvert reinterprets the bits of x as element type d (stablehlo.bitcast_convert,
// lax.bitcast_convert_type), as XLA lays them out (little-endian on every supported
// platform). Same-width types keep the shape. A narrower d adds a last dimension of
// width(x)/width(d) elements (s32 to u8: [n] becomes [n, 4]); a wider d removes x's last
// dimension, which must have width(d)/width(x) elements ([n, 2] of u32 becomes [n] of
// u64). pred is not bitcast, as in JAX (ErrDType).
func (f *Function) BitcastConvert(x Value, d DType) Value {
	const opName = "bitcast_convert"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	if !supported(d) || d == dtypes.Bool {
		f.failf(opName, -1, nil, ErrDType, "invalid target type %s", dtypeName(d))
		return Value{}
	}
	if a.shape.DType() == dtypes.Bool {
		f.failf(opName, 0, a, ErrDType, "cannot bitcast pred")
		return Value{}
	}
	from, to := shapes.Bits(a.shape.DType()), shapes.Bits(d)
	dims := a.shape.Dims()
	switch {
	case to < from:
		dims = append(dims, from/to)
	case to > from:
		r := len(dims)
		if r == 0 || dims[r-1] != to/from {
			f.failf(opName, 0, a, ErrShape, "bitcasting %v to the wider %s needs a last dimension of %d, got %v", a.shape, dtypeName(d), to/from, a.shape)
			return Value{}
		}
		dims = dims[:r-1]
	}
	return f.emit("stablehlo.bitcast_convert", []*value{a}, NewShape(d, dims...), nil)
}
