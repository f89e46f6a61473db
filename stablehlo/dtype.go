package stablehlo

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// DType is the element type of a tensor: gopjrt's [dtypes.DType], whose numbers are PJRT's
// PJRT_Buffer_Type, so a built type and a device buffer's type share one numbering. Shapes of
// every element type shapes.Supported names parse and print ([ParseShape], [Shape.String]);
// the builder's ops compute on thirteen of them: [dtypes.Bool] (StableHLO's i1, XLA's pred),
// [dtypes.Int8] to [dtypes.Int64], [dtypes.Uint8] to [dtypes.Uint64], [dtypes.Float16],
// [dtypes.BFloat16], [dtypes.Float32] and [dtypes.Float64]. Ops given any other value,
// including [dtypes.InvalidDType], fail with an error wrapping ErrDType.
//
// dtypes.DType's String prints Go-style names ("Float32"); [MLIRType] gives the name StableHLO
// text uses ("f32") and [ParseDType] reads it back.
type DType = dtypes.DType

// supported reports whether the builder's ops compute on element type d (see DType).
func supported(d DType) bool {
	switch d {
	case dtypes.Bool, dtypes.Int8, dtypes.Int16, dtypes.Int32, dtypes.Int64, dtypes.Uint8, dtypes.Uint16,
		dtypes.Uint32, dtypes.Uint64, dtypes.Float16, dtypes.BFloat16, dtypes.Float32, dtypes.Float64:
		return true
	}
	return false
}

// signed reports whether d is a signed integer type.
func signed(d DType) bool { return d.IsInt() && !d.IsUnsigned() }

// MLIRType returns element type d as StableHLO text writes it: "i1", "i32", "ui8", "bf16",
// "f32", "complex<f32>", "f8E4M3FN", ... ([shapes.MLIRName]); for an invalid type it returns
// "invalid".
func MLIRType(d DType) string { return shapes.MLIRName(d) }

// dtypeName returns XLA's name of d ("pred", "s32", "u8", "f32"), the form error messages use.
func dtypeName(d DType) string { return shapes.XLAName(d) }

// ParseDType reads an element type name in either XLA ("s32", "pred", "c64") or MLIR ("i32",
// "i1", "complex<f32>") spelling, of any type shapes.Supported names. Any other name gives an
// error.
func ParseDType(s string) (DType, error) {
	d, err := shapes.ParseDType(s)
	if err != nil {
		return dtypes.InvalidDType, fmt.Errorf("stablehlo: %w: %w", ErrDType, err)
	}
	return d, nil
}
