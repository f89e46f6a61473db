package shapes

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
)

// Shape is an element type and static dimensions: a ranked tensor type in StableHLO's terms,
// an aval in JAX's. The zero Shape has no valid element type and rank 0.
type Shape struct {
	dtype dtypes.DType
	dims  []int
}

// Make returns the shape of the given element type and dimensions, e.g.
// Make(dtypes.Float32, 8, 2) for tensor<8x2xf32>; with no dims it is a scalar. The dims are
// copied. Make does not validate: an unsupported element type or a negative dimension is
// reported by whoever receives the shape (a stablehlo op, a pjrt transfer).
func Make(d dtypes.DType, dims ...int) Shape {
	if len(dims) == 0 {
		return Shape{dtype: d} // one representation per shape, so reflect.DeepEqual agrees with Equal
	}
	return Shape{dtype: d, dims: slices.Clone(dims)}
}

// DType returns the element type.
func (s Shape) DType() dtypes.DType { return s.dtype }

// Dims returns a copy of the dimensions (empty for a scalar). Loops that must not allocate use
// Rank and Dim, or AppendDims.
func (s Shape) Dims() []int { return slices.Clone(s.dims) }

// AppendDims appends the dimensions to dst and returns the extended slice.
func (s Shape) AppendDims(dst []int) []int { return append(dst, s.dims...) }

// Dim returns dimension i; it panics if i is out of range, like a slice index.
func (s Shape) Dim(i int) int { return s.dims[i] }

// Rank returns the number of dimensions (0 for a scalar).
func (s Shape) Rank() int { return len(s.dims) }

// Size returns the number of elements. For a shape whose element count overflows int the result
// is meaningless; stablehlo and pjrt reject such shapes.
func (s Shape) Size() int {
	n := 1
	for _, d := range s.dims {
		n *= d
	}
	return n
}

// Bytes returns the size of an array of this shape in bytes, or 0 for an element type that is
// not Supported.
func (s Shape) Bytes() int {
	if !Supported(s.dtype) {
		return 0
	}
	return s.Size() * s.dtype.Size()
}

// Equal reports whether s and t have the same element type and dimensions.
func (s Shape) Equal(t Shape) bool { return s.dtype == t.dtype && slices.Equal(s.dims, t.dims) }

// EqualDims reports whether s has exactly the dimensions dims, whatever its element type.
func (s Shape) EqualDims(dims []int) bool { return slices.Equal(s.dims, dims) }

// WithDType returns the shape with the same dimensions and element type d.
func (s Shape) WithDType(d dtypes.DType) Shape { return Shape{dtype: d, dims: s.dims} }

// String returns the shape as an MLIR tensor type, the form StableHLO text and the builder's
// errors use: "tensor<8x2xf32>", "tensor<i1>" for a boolean scalar. An element type that is
// not Supported prints as "invalid".
func (s Shape) String() string {
	var b strings.Builder
	s.WriteTensorType(&b)
	return b.String()
}

// WriteTensorType writes String's text to b, for printers that build a larger text.
func (s Shape) WriteTensorType(b *strings.Builder) {
	b.WriteString("tensor<")
	for _, d := range s.dims {
		b.WriteString(strconv.Itoa(d))
		b.WriteByte('x')
	}
	b.WriteString(MLIRName(s.dtype))
	b.WriteByte('>')
}

// Aval returns the shape as JAX prints an abstract value, the form of pjrt's, jit's and
// jaxexport's messages: "f32[8,2]", "bool[]".
func (s Shape) Aval() string {
	var b strings.Builder
	b.WriteString(AvalName(s.dtype))
	b.WriteByte('[')
	for i, d := range s.dims {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(d))
	}
	b.WriteByte(']')
	return b.String()
}

// names holds, for each Supported element type (indexed by its dtypes number), the names
// StableHLO text, JAX avals and NumPy give it.
var names = [...]struct{ mlir, aval, numpy string }{
	dtypes.Bool:     {"i1", "bool", "bool"},
	dtypes.Int8:     {"i8", "i8", "int8"},
	dtypes.Int16:    {"i16", "i16", "int16"},
	dtypes.Int32:    {"i32", "i32", "int32"},
	dtypes.Int64:    {"i64", "i64", "int64"},
	dtypes.Uint8:    {"ui8", "u8", "uint8"},
	dtypes.Uint16:   {"ui16", "u16", "uint16"},
	dtypes.Uint32:   {"ui32", "u32", "uint32"},
	dtypes.Uint64:   {"ui64", "u64", "uint64"},
	dtypes.Float16:  {"f16", "f16", "float16"},
	dtypes.Float32:  {"f32", "f32", "float32"},
	dtypes.Float64:  {"f64", "f64", "float64"},
	dtypes.BFloat16: {"bf16", "bf16", "bfloat16"},
}

// Supported reports whether xlamesh builds and moves arrays of element type d: bool, the signed
// and unsigned integers of 8 to 64 bits, f16, bf16, f32 and f64.
func Supported(d dtypes.DType) bool { return d > 0 && int(d) < len(names) && names[d].mlir != "" }

// MLIRName returns element type d as StableHLO text writes it ("i1", "ui8", "bf16", "f32"), or
// "invalid" for a type that is not Supported.
func MLIRName(d dtypes.DType) string {
	if Supported(d) {
		return names[d].mlir
	}
	return "invalid"
}

// AvalName returns element type d as JAX avals write it ("bool", "u8", "bf16", "f32", "c64"),
// or dtypes' own name in lower case for a type without a short name.
func AvalName(d dtypes.DType) string {
	switch {
	case Supported(d):
		return names[d].aval
	case d == dtypes.Complex64:
		return "c64"
	case d == dtypes.Complex128:
		return "c128"
	}
	return strings.ToLower(d.String())
}

// NumPyName returns element type d as NumPy (and jax.typeof) writes it ("bool", "uint8",
// "bfloat16", "float32", "complex64"), or dtypes' own name in lower case for a type without one.
func NumPyName(d dtypes.DType) string {
	switch {
	case Supported(d):
		return names[d].numpy
	case d == dtypes.Complex64:
		return "complex64"
	case d == dtypes.Complex128:
		return "complex128"
	}
	return strings.ToLower(d.String())
}
