package stablehlo

import (
	"errors"
	"fmt"
	"math"

	"github.com/xlamesh/xlamesh/shapes"
)

// Shape is a ranked tensor type: an element type and static dimensions. It is [shapes.Shape],
// xlamesh's one shape type, shared with pjrt, jit and jaxexport; its String is the MLIR tensor
// type, e.g. "tensor<8x2xf32>".
type Shape = shapes.Shape

// NewShape returns the tensor type of the given element type and dimensions, e.g.
// NewShape(dtypes.Float32, 8, 2) for tensor<8x2xf32>; it is [shapes.Make]. A shape without
// dims is a scalar. The dims are copied. An unsupported element type or a negative dimension
// is reported by the op that receives the shape.
func NewShape(d DType, dims ...int) Shape { return shapes.Make(d, dims...) }

// CheckShape reports whether s is a shape an op may produce: it returns an error wrapping
// ErrDType for an element type xlamesh does not support, and one wrapping ErrShape for a
// negative dimension or an element count or byte size that overflows int64; nil otherwise.
// Every op checks its result shapes so; a helper that builds several ops checks the shape it
// was asked for with it, so that its own op name is the one in the error.
func CheckShape(s Shape) error { return validShape(s) }

// validShape reports an unsupported element type, a negative dimension or a size that
// overflows int64 bytes.
func validShape(s Shape) error {
	if !supported(s.DType()) {
		return fmt.Errorf("%w: invalid element type %s", ErrDType, dtypeName(s.DType()))
	}
	n := 1
	for i := range s.Rank() {
		d := s.Dim(i)
		if d < 0 {
			return fmt.Errorf("%w: dimension %d has negative size %d", ErrShape, i, d)
		}
		var ok bool
		if n, ok = mulDims(n, d); !ok {
			return fmt.Errorf("%w: %v: the element count overflows int64 at dimension %d", ErrShape, s, i)
		}
	}
	if _, ok := mulDims(n, max(1, shapes.ElementBytes(s.DType()))); !ok {
		return fmt.Errorf("%w: %v: %d elements of %d bytes overflow int64 bytes", ErrShape, s, n, max(1, shapes.ElementBytes(s.DType())))
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

// scalarOf returns the rank-0 shape of s's element type.
func scalarOf(s Shape) Shape { return shapes.Make(s.DType()) }

// ParseShape reads a static ranked tensor type as StableHLO text writes it, such as
// "tensor<8x2xf32>", "tensor<i1>" or "tensor<4xcomplex<f32>>" (element types in either MLIR
// or XLA spelling, see ParseDType); it is the inverse of Shape.String
// ([shapes.ParseTensorType]). Any other text, including dynamic ("?") or negative
// dimensions, gives an error that quotes it and, for an unknown element type, wraps ErrDType.
func ParseShape(t string) (Shape, error) {
	s, err := shapes.ParseTensorType(t)
	if errors.Is(err, shapes.ErrUnknownDType) {
		return Shape{}, fmt.Errorf("%w: %w", ErrDType, err)
	}
	return s, err
}
