package stablehlo

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// DType is the element type of a tensor: gopjrt's [dtypes.DType], whose numbers are PJRT's
// PJRT_Buffer_Type, so a built type and a device buffer's type share one numbering. stablehlo
// accepts thirteen of its values: [dtypes.Bool] (StableHLO's i1, XLA's pred), [dtypes.Int8]
// to [dtypes.Int64], [dtypes.Uint8] to [dtypes.Uint64], [dtypes.Float16], [dtypes.BFloat16],
// [dtypes.Float32] and [dtypes.Float64]. Ops given any other value, including
// [dtypes.InvalidDType], fail with an error wrapping ErrDType.
//
// dtypes.DType's String prints Go-style names ("Float32"); [MLIRType] gives the name StableHLO
// text uses ("f32") and [ParseDType] reads it back.
type DType = dtypes.DType

// xlaNames holds, for each supported element type (indexed by its dtypes number), XLA's name;
// the StableHLO names are shapes.MLIRName's, the one table of them.
var xlaNames = [...]string{
	dtypes.Bool: "pred", dtypes.Int8: "s8", dtypes.Int16: "s16", dtypes.Int32: "s32", dtypes.Int64: "s64",
	dtypes.Uint8: "u8", dtypes.Uint16: "u16", dtypes.Uint32: "u32", dtypes.Uint64: "u64",
	dtypes.Float16: "f16", dtypes.Float32: "f32", dtypes.Float64: "f64", dtypes.BFloat16: "bf16",
}

// supported reports whether the builder can build tensors of element type d: shapes.Supported.
func supported(d DType) bool { return shapes.Supported(d) }

// signed reports whether d is a signed integer type.
func signed(d DType) bool { return d.IsInt() && !d.IsUnsigned() }

// MLIRType returns element type d as StableHLO text writes it: "i1", "i32", "ui8", "bf16",
// "f32", ...; for a type stablehlo does not support it returns "invalid".
func MLIRType(d DType) string { return shapes.MLIRName(d) }

// dtypeName returns XLA's name of d ("pred", "s32", "u8", "f32"), the form error
// messages use, or dtypes' own name for a type stablehlo does not support.
func dtypeName(d DType) string {
	if d > 0 && int(d) < len(xlaNames) && xlaNames[d] != "" {
		return xlaNames[d]
	}
	return d.String()
}

// ParseDType reads an element type name in either XLA ("s32", "pred") or MLIR ("i32", "i1")
// spelling. Any other name gives an error.
func ParseDType(s string) (DType, error) {
	for i, n := range xlaNames {
		if n != "" && (s == n || s == shapes.MLIRName(DType(i))) {
			return DType(i), nil
		}
	}
	return dtypes.InvalidDType, fmt.Errorf("stablehlo: %w: unknown element type %q", ErrDType, s)
}
