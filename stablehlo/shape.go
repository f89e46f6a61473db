package stablehlo

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Shape is a ranked tensor type: an element type and static dimensions.
// Shape has value semantics: Dims returns a copy, and no method changes it.
type Shape struct {
	dtype DType
	dims  []int
}

// NewShape returns the tensor type of the given element type and dimensions, e.g.
// NewShape(dtypes.Float32, 8, 2) for tensor<8x2xf32>. A shape without dims is a scalar.
// The dims are copied. An unsupported element type or a negative dimension is reported
// by the op that receives the shape.
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

// Size returns the number of elements. For a shape whose element count overflows int (which
// every op and Arg reject with ErrShape) the result is meaningless.
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
	b.WriteString(MLIRType(s.dtype))
	b.WriteByte('>')
}

func (s Shape) valid() error {
	if !supported(s.dtype) {
		return fmt.Errorf("%w: invalid element type %s", ErrDType, dtypeName(s.dtype))
	}
	n := 1
	for i, d := range s.dims {
		if d < 0 {
			return fmt.Errorf("%w: dimension %d has negative size %d", ErrShape, i, d)
		}
		var ok bool
		if n, ok = mulDims(n, d); !ok {
			return fmt.Errorf("%w: %v: the element count overflows int64 at dimension %d", ErrShape, s, i)
		}
	}
	if _, ok := mulDims(n, max(1, s.dtype.Size())); !ok {
		return fmt.Errorf("%w: %v: %d elements of %d bytes overflow int64 bytes", ErrShape, s, n, max(1, s.dtype.Size()))
	}
	return nil
}

// mulDims returns a*b for sizes a, b >= 0, and false when the product overflows int64.
func mulDims(a, b int) (int, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if a > math.MaxInt64/b {
		return 0, false
	}
	return a * b, true
}

// addDims returns a+b, and false when the sum overflows int64 (either may be negative).
func addDims(a, b int) (int, bool) {
	c := a + b
	return c, (b >= 0) == (c >= a)
}

// scalar returns the rank-0 shape of the same element type.
func (s Shape) scalar() Shape { return Shape{dtype: s.dtype} }

// ParseShape reads a static ranked tensor type as StableHLO text writes it, such as
// "tensor<8x2xf32>" or "tensor<i1>" (element types in either MLIR or XLA spelling, see
// ParseDType); it is the inverse of Shape.String. Any other text, including dynamic
// ("?") or negative dimensions, gives an error that quotes it.
func ParseShape(t string) (Shape, error) {
	if !strings.HasPrefix(t, "tensor<") || !strings.HasSuffix(t, ">") {
		return Shape{}, fmt.Errorf("%q is not a ranked tensor type", t)
	}
	parts := strings.Split(t[len("tensor<"):len(t)-1], "x")
	d, err := ParseDType(parts[len(parts)-1])
	if err != nil {
		return Shape{}, fmt.Errorf("%q: %w", t, err)
	}
	dims := make([]int, len(parts)-1)
	for i, p := range parts[:len(parts)-1] {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return Shape{}, fmt.Errorf("%q is not a static tensor type", t)
		}
		dims[i] = n
	}
	return NewShape(d, dims...), nil
}
