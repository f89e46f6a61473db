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

// Bytes returns the size of an array of this shape in host memory ([ElementBytes] per element),
// or 0 for an element type that is not Supported.
func (s Shape) Bytes() int { return s.Size() * ElementBytes(s.dtype) }

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

// PyTuple writes dims as Python writes a shape tuple, as JAX's messages name shapes: "()",
// "(4,)", "(2, 3)".
func PyTuple(dims []int) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = strconv.Itoa(d)
	}
	if len(s) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}
