package lower

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// DType is the element type of a tensor. The zero value is invalid.
type DType uint8

// Element types, named as XLA names them (pred, s8, u8, f32, ...).
const (
	Pred DType = iota + 1 // boolean, MLIR i1
	S8                    // signed 8-bit integer, MLIR i8
	S16                   // signed 16-bit integer, MLIR i16
	S32                   // signed 32-bit integer, MLIR i32
	S64                   // signed 64-bit integer, MLIR i64
	U8                    // unsigned 8-bit integer, MLIR ui8
	U16                   // unsigned 16-bit integer, MLIR ui16
	U32                   // unsigned 32-bit integer, MLIR ui32
	U64                   // unsigned 64-bit integer, MLIR ui64
	F16                   // IEEE half precision, MLIR f16
	BF16                  // bfloat16, MLIR bf16
	F32                   // IEEE single precision, MLIR f32
	F64                   // IEEE double precision, MLIR f64
)

var dtypeNames = [...]string{"", "pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"}
var dtypeMLIR = [...]string{"", "i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "f16", "bf16", "f32", "f64"}

// String returns XLA's name of the type: "pred", "s32", "u8", "bf16", "f32", ...
func (d DType) String() string {
	if d.Valid() {
		return dtypeNames[d]
	}
	return "DType(" + strconv.Itoa(int(d)) + ")"
}

// MLIR returns the element type as StableHLO text writes it: "i1", "i32", "ui8", "f32", ...
func (d DType) MLIR() string {
	if d.Valid() {
		return dtypeMLIR[d]
	}
	return "invalid"
}

// Valid reports whether d is one of the defined element types.
func (d DType) Valid() bool { return d >= Pred && d <= F64 }

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d >= F16 && d <= F64 }

// IsInt reports whether d is a signed or unsigned integer type (not pred).
func (d DType) IsInt() bool { return d >= S8 && d <= U64 }

// IsSigned reports whether d is a signed integer type.
func (d DType) IsSigned() bool { return d >= S8 && d <= S64 }

// IsUnsigned reports whether d is an unsigned integer type.
func (d DType) IsUnsigned() bool { return d >= U8 && d <= U64 }

// Bits returns the width of one element in bits (1 for pred).
func (d DType) Bits() int {
	switch d {
	case Pred:
		return 1
	case S8, U8:
		return 8
	case S16, U16, F16, BF16:
		return 16
	case S32, U32, F32:
		return 32
	case S64, U64, F64:
		return 64
	}
	return 0
}

// Shape returns the tensor type with element type d and the given dimensions.
// It is shorthand for NewShape(d, dims...).
func (d DType) Shape(dims ...int) Shape { return NewShape(d, dims...) }

// ParseDType reads a type name in either XLA ("s32", "pred") or MLIR ("i32", "i1") spelling.
func ParseDType(s string) (DType, error) {
	for i := range dtypeNames {
		if i > 0 && (s == dtypeNames[i] || s == dtypeMLIR[i]) {
			return DType(i), nil
		}
	}
	return 0, fmt.Errorf("lower: unknown element type %q", s)
}

// Shape is a ranked tensor type: an element type and static dimensions.
// Shape has value semantics: Dims returns a copy, and no method changes it.
type Shape struct {
	dtype DType
	dims  []int
}

// NewShape returns the tensor type of the given element type and dimensions.
// A shape without dims is a scalar. The dims are copied.
func NewShape(d DType, dims ...int) Shape {
	return Shape{dtype: d, dims: slices.Clone(dims)}
}

// DType returns the element type.
func (s Shape) DType() DType { return s.dtype }

// Dims returns a copy of the dimensions.
func (s Shape) Dims() []int { return slices.Clone(s.dims) }

// Dim returns dimension i; it panics if i is out of range, like a slice index.
func (s Shape) Dim(i int) int { return s.dims[i] }

// Rank returns the number of dimensions (0 for a scalar).
func (s Shape) Rank() int { return len(s.dims) }

// Size returns the number of elements.
func (s Shape) Size() int {
	n := 1
	for _, d := range s.dims {
		n *= d
	}
	return n
}

// Equal reports whether s and t have the same element type and dimensions.
func (s Shape) Equal(t Shape) bool { return s.dtype == t.dtype && slices.Equal(s.dims, t.dims) }

// WithDType returns the shape with the same dimensions and element type d.
func (s Shape) WithDType(d DType) Shape { return Shape{dtype: d, dims: s.dims} }

// String returns the MLIR tensor type, e.g. "tensor<8x2xf32>" or "tensor<i1>".
func (s Shape) String() string {
	var b strings.Builder
	s.writeTo(&b)
	return b.String()
}

func (s Shape) writeTo(b *strings.Builder) {
	b.WriteString("tensor<")
	for _, d := range s.dims {
		b.WriteString(strconv.Itoa(d))
		b.WriteByte('x')
	}
	b.WriteString(s.dtype.MLIR())
	b.WriteByte('>')
}

func (s Shape) valid() error {
	if !s.dtype.Valid() {
		return fmt.Errorf("%w: invalid element type %v", ErrDType, s.dtype)
	}
	for i, d := range s.dims {
		if d < 0 {
			return fmt.Errorf("%w: dimension %d has negative size %d", ErrShape, i, d)
		}
	}
	return nil
}

// scalarOf returns the rank-0 shape of the same element type.
func (s Shape) scalar() Shape { return Shape{dtype: s.dtype} }
