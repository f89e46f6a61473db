package lower

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
)

// DType is the element type of a tensor: gopjrt's [dtypes.DType], whose numbers are PJRT's
// PJRT_Buffer_Type, so a lowered type and a device buffer's type share one numbering. lower
// accepts thirteen of its values: [dtypes.Bool] (StableHLO's i1, XLA's pred), [dtypes.Int8]
// to [dtypes.Int64], [dtypes.Uint8] to [dtypes.Uint64], [dtypes.Float16], [dtypes.BFloat16],
// [dtypes.Float32] and [dtypes.Float64]. Ops given any other value, including
// [dtypes.InvalidDType], fail with an error wrapping ErrDType.
//
// dtypes.DType's String prints Go-style names ("Float32"); [MLIRType] gives the name StableHLO
// text uses ("f32") and [ParseDType] reads it back.
type DType = dtypes.DType

// dtypeNames holds, for each supported element type (indexed by its dtypes number), XLA's
// name and StableHLO's.
var dtypeNames = [...]struct{ xla, mlir string }{
	dtypes.Bool:     {"pred", "i1"},
	dtypes.Int8:     {"s8", "i8"},
	dtypes.Int16:    {"s16", "i16"},
	dtypes.Int32:    {"s32", "i32"},
	dtypes.Int64:    {"s64", "i64"},
	dtypes.Uint8:    {"u8", "ui8"},
	dtypes.Uint16:   {"u16", "ui16"},
	dtypes.Uint32:   {"u32", "ui32"},
	dtypes.Uint64:   {"u64", "ui64"},
	dtypes.Float16:  {"f16", "f16"},
	dtypes.Float32:  {"f32", "f32"},
	dtypes.Float64:  {"f64", "f64"},
	dtypes.BFloat16: {"bf16", "bf16"},
}

// supported reports whether lower can build tensors of element type d.
func supported(d DType) bool { return d > 0 && int(d) < len(dtypeNames) && dtypeNames[d].xla != "" }

// signed reports whether d is a signed integer type.
func signed(d DType) bool { return d.IsInt() && !d.IsUnsigned() }

// MLIRType returns element type d as StableHLO text writes it: "i1", "i32", "ui8", "bf16",
// "f32", ...; for a type lower does not support it returns "invalid".
func MLIRType(d DType) string {
	if supported(d) {
		return dtypeNames[d].mlir
	}
	return "invalid"
}

// dtypeName returns XLA's name of d ("pred", "s32", "u8", "f32"), the form lower's error
// messages use, or dtypes' own name for a type lower does not support.
func dtypeName(d DType) string {
	if supported(d) {
		return dtypeNames[d].xla
	}
	return d.String()
}

// ParseDType reads an element type name in either XLA ("s32", "pred") or MLIR ("i32", "i1")
// spelling. Any other name gives an error.
func ParseDType(s string) (DType, error) {
	for i, n := range dtypeNames {
		if n.xla != "" && (s == n.xla || s == n.mlir) {
			return DType(i), nil
		}
	}
	return dtypes.InvalidDType, fmt.Errorf("lower: %w: unknown element type %q", ErrDType, s)
}

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
