package stablehlo

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// DType is the element type of a tensor: gopjrt's [dtypes.DType], whose numbers are PJRT's
// PJRT_Buffer_Type, so a built type and a device buffer's type share one numbering. The
// builder holds values of every element type shapes.Supported names: bool (StableHLO's i1,
// XLA's pred), the signed and unsigned integers of 2 to 64 bits, f16, bf16, f32, f64,
// complex64, complex128, the float8 family and f4E2M1FN. Each op says which of them it
// computes on (arithmetic on the integers, floats and complex types; transcendental functions
// on floats and complex; bitwise ops on integers and pred; ...): any other, including
// [dtypes.InvalidDType], fails with an error wrapping ErrDType.
//
// dtypes.DType's String prints Go-style names ("Float32"); [MLIRType] gives the name StableHLO
// text uses ("f32") and [ParseDType] reads it back.
type DType = dtypes.DType

// supported reports whether the builder holds values of element type d (see DType).
func supported(d DType) bool { return shapes.Supported(d) }

// signed reports whether d is a signed integer type (int2 to int64).
func signed(d DType) bool { return shapes.IsSigned(d) }

// isInt reports whether d is an integer type, signed or not (2 to 64 bits).
func isInt(d DType) bool { return shapes.IsSigned(d) || shapes.IsUnsigned(d) }

// wideFloat reports whether d is f16, bf16, f32 or f64: the floats with infinities and NaN in
// IEEE form, the ones reductions, random numbers and the nn helpers compute in.
func wideFloat(d DType) bool { return d.IsFloat() }

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
