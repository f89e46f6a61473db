package shapes

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"
)

// ErrUnknownDType is wrapped by the errors of ParseDType and ParseTensorType for a name that is
// not an element type.
var ErrUnknownDType = errors.New("unknown element type")

// names holds, for each Supported element type (indexed by its dtypes number, PJRT's
// PJRT_Buffer_Type), the names StableHLO text, XLA, JAX avals and NumPy (with ml_dtypes) give
// it, and its width in bits.
var names = [...]struct {
	mlir, xla, aval, numpy string
	bits                   int
}{
	dtypes.Bool:          {"i1", "pred", "bool", "bool", 8},
	dtypes.Int8:          {"i8", "s8", "i8", "int8", 8},
	dtypes.Int16:         {"i16", "s16", "i16", "int16", 16},
	dtypes.Int32:         {"i32", "s32", "i32", "int32", 32},
	dtypes.Int64:         {"i64", "s64", "i64", "int64", 64},
	dtypes.Uint8:         {"ui8", "u8", "u8", "uint8", 8},
	dtypes.Uint16:        {"ui16", "u16", "u16", "uint16", 16},
	dtypes.Uint32:        {"ui32", "u32", "u32", "uint32", 32},
	dtypes.Uint64:        {"ui64", "u64", "u64", "uint64", 64},
	dtypes.Float16:       {"f16", "f16", "f16", "float16", 16},
	dtypes.Float32:       {"f32", "f32", "f32", "float32", 32},
	dtypes.Float64:       {"f64", "f64", "f64", "float64", 64},
	dtypes.BFloat16:      {"bf16", "bf16", "bf16", "bfloat16", 16},
	dtypes.Complex64:     {"complex<f32>", "c64", "c64", "complex64", 64},
	dtypes.Complex128:    {"complex<f64>", "c128", "c128", "complex128", 128},
	dtypes.F8E5M2:        {"f8E5M2", "f8e5m2", "f8_e5m2", "float8_e5m2", 8},
	dtypes.F8E4M3FN:      {"f8E4M3FN", "f8e4m3fn", "f8_e4m3fn", "float8_e4m3fn", 8},
	dtypes.F8E4M3B11FNUZ: {"f8E4M3B11FNUZ", "f8e4m3b11fnuz", "f8_e4m3b11fnuz", "float8_e4m3b11fnuz", 8},
	dtypes.F8E5M2FNUZ:    {"f8E5M2FNUZ", "f8e5m2fnuz", "f8_e5m2fnuz", "float8_e5m2fnuz", 8},
	dtypes.F8E4M3FNUZ:    {"f8E4M3FNUZ", "f8e4m3fnuz", "f8_e4m3fnuz", "float8_e4m3fnuz", 8},
	dtypes.S4:            {"i4", "s4", "i4", "int4", 4},
	dtypes.U4:            {"ui4", "u4", "u4", "uint4", 4},
	dtypes.S2:            {"i2", "s2", "i2", "int2", 2},
	dtypes.U2:            {"ui2", "u2", "u2", "uint2", 2},
	dtypes.F8E4M3:        {"f8E4M3", "f8e4m3", "f8_e4m3", "float8_e4m3", 8},
	dtypes.F8E3M4:        {"f8E3M4", "f8e3m4", "f8_e3m4", "float8_e3m4", 8},
	dtypes.F8E8M0FNU:     {"f8E8M0FNU", "f8e8m0fnu", "f8_e8m0fnu", "float8_e8m0fnu", 8},
	dtypes.F4E2M1FN:      {"f4E2M1FN", "f4e2m1fn", "f4_e2m1fn", "float4_e2m1fn", 4},
}

// Supported reports whether xlamesh reads, writes, moves and stores arrays of element type d:
// every array element type PJRT and XLA have and gopjrt's dtypes names — bool, the signed and
// unsigned integers of 2, 4, 8, 16, 32 and 64 bits, f16, bf16, f32, f64, complex64 and
// complex128, the float8 family and f4E2M1FN. Not the token type, and not
// dtypes.InvalidDType. Which of them the builder computes with is stablehlo's to say.
func Supported(d dtypes.DType) bool { return d > 0 && int(d) < len(names) && names[d].mlir != "" }

// MLIRName returns element type d as StableHLO text writes it ("i1", "ui8", "bf16", "f32",
// "complex<f32>", "f8E4M3FN", "i4"), or "invalid" for a type that is not Supported.
func MLIRName(d dtypes.DType) string {
	if Supported(d) {
		return names[d].mlir
	}
	return "invalid"
}

// XLAName returns element type d as XLA's HLO text writes it ("pred", "s32", "u8", "c64",
// "f8e4m3fn", "s4"), or dtypes' own name for a type that is not Supported.
func XLAName(d dtypes.DType) string {
	if Supported(d) {
		return names[d].xla
	}
	return d.String()
}

// AvalName returns element type d as JAX avals write it ("bool", "u8", "bf16", "f32", "c64",
// "f8_e4m3fn", "i4"), or dtypes' own name in lower case for a type that is not Supported.
func AvalName(d dtypes.DType) string {
	if Supported(d) {
		return names[d].aval
	}
	return strings.ToLower(d.String())
}

// NumPyName returns element type d as NumPy, ml_dtypes and jax.typeof write it ("bool",
// "uint8", "bfloat16", "float32", "complex64", "float8_e4m3fn", "int4"), or dtypes' own name in
// lower case for a type that is not Supported.
func NumPyName(d dtypes.DType) string {
	if Supported(d) {
		return names[d].numpy
	}
	return strings.ToLower(d.String())
}

// ParseDType reads an element type as StableHLO text ("i32", "complex<f32>", "f8E4M3FN") or
// XLA ("s32", "pred", "c64", "s4") writes it. Any other name gives an error that quotes it.
func ParseDType(s string) (dtypes.DType, error) {
	for i, n := range names {
		if n.mlir != "" && (s == n.mlir || s == n.xla) {
			return dtypes.DType(i), nil
		}
	}
	return dtypes.InvalidDType, fmt.Errorf("%w %q", ErrUnknownDType, s)
}

// Bits returns the width of one element of type d in bits as XLA stores it on a device (4 for
// int4, 64 for complex64, 8 for bool), or 0 for a type that is not Supported.
func Bits(d dtypes.DType) int {
	if Supported(d) {
		return names[d].bits
	}
	return 0
}

// ElementBytes returns the bytes one element of type d takes in host memory, the layout every
// host-side API of xlamesh reads and writes (Put, ToHostBytes, checkpoints): the element's own
// size, and one byte for the sub-byte types (int4, uint4, int2, uint2, f4E2M1FN), which hold
// one element each, in the byte's low bits, as NumPy's ml_dtypes arrays and PJRT's host
// buffers hold them. It is 0 for a type that is not Supported.
func ElementBytes(d dtypes.DType) int {
	if !Supported(d) {
		return 0
	}
	return max(1, names[d].bits/8)
}

// IsFloat reports whether d is a real floating-point type: f16, bf16, f32, f64, the float8
// family or f4E2M1FN.
func IsFloat(d dtypes.DType) bool {
	switch d {
	case dtypes.Float16, dtypes.BFloat16, dtypes.Float32, dtypes.Float64, dtypes.F8E5M2, dtypes.F8E4M3FN,
		dtypes.F8E4M3B11FNUZ, dtypes.F8E5M2FNUZ, dtypes.F8E4M3FNUZ, dtypes.F8E4M3, dtypes.F8E3M4,
		dtypes.F8E8M0FNU, dtypes.F4E2M1FN:
		return true
	}
	return false
}

// IsComplex reports whether d is complex64 or complex128.
func IsComplex(d dtypes.DType) bool { return d == dtypes.Complex64 || d == dtypes.Complex128 }

// IsInexact reports whether d is a floating-point or complex type (NumPy's np.inexact): the
// types whose values JAX differentiates, and so package autodiff.
func IsInexact(d dtypes.DType) bool { return IsFloat(d) || IsComplex(d) }

// IsSigned reports whether d is a signed integer type (int2 to int64).
func IsSigned(d dtypes.DType) bool {
	switch d {
	case dtypes.S2, dtypes.S4, dtypes.Int8, dtypes.Int16, dtypes.Int32, dtypes.Int64:
		return true
	}
	return false
}

// IsUnsigned reports whether d is an unsigned integer type (uint2 to uint64).
func IsUnsigned(d dtypes.DType) bool {
	switch d {
	case dtypes.U2, dtypes.U4, dtypes.Uint8, dtypes.Uint16, dtypes.Uint32, dtypes.Uint64:
		return true
	}
	return false
}

// ParseTensorType reads a static ranked tensor type as StableHLO text writes it, such as
// "tensor<8x2xf32>", "tensor<i1>" or "tensor<4xcomplex<f32>>" (element types as ParseDType
// reads them); it is the inverse of Shape.String. Any other text, including dynamic ("?") or
// negative dimensions and an encoding after the element type, gives an error that quotes it.
func ParseTensorType(t string) (Shape, error) {
	body, ok := strings.CutPrefix(t, "tensor<")
	if !ok || !strings.HasSuffix(body, ">") {
		return Shape{}, fmt.Errorf("%q is not a ranked tensor type", t)
	}
	body = body[:len(body)-1]
	var dims []int
	for {
		// A dimension is digits (or "?") up to an "x"; the element type is what follows the last.
		i := 0
		for i < len(body) && (body[i] >= '0' && body[i] <= '9' || body[i] == '?' || body[i] == '-') {
			i++
		}
		if i == 0 || i == len(body) || body[i] != 'x' {
			break
		}
		n, err := strconv.Atoi(body[:i])
		if err != nil || n < 0 {
			return Shape{}, fmt.Errorf("%q is not a static tensor type", t)
		}
		dims = append(dims, n)
		body = body[i+1:]
	}
	d, err := ParseDType(body)
	if err != nil {
		return Shape{}, fmt.Errorf("%q: %w", t, err)
	}
	return Make(d, dims...), nil
}

// Float16Value returns the value of an IEEE half-precision float (f16) from its bits. Every
// f16 value is a float32 (and a float64) exactly.
func Float16Value(bits uint16) float32 {
	sign := float32(1)
	if bits&0x8000 != 0 {
		sign = -1
	}
	exp := int(bits>>10) & 0x1F
	frac := float32(bits & 0x3FF)
	switch exp {
	case 0: // zero and subnormals: frac * 2^-24
		return sign * frac * float32(math.Ldexp(1, -24))
	case 0x1F:
		if frac == 0 {
			return sign * float32(math.Inf(1))
		}
		return float32(math.NaN())
	}
	return sign * (1 + frac/1024) * float32(math.Ldexp(1, exp-15))
}

// BFloat16Value returns the value of a bfloat16 from its bits: the upper half of a float32's.
func BFloat16Value(bits uint16) float32 { return math.Float32frombits(uint32(bits) << 16) }
