package pjrt

import (
	"fmt"
	"unsafe"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/gomlx/gopjrt/dtypes/bfloat16"

	"github.com/xlamesh/xlamesh/internal/hostmem"
	"github.com/xlamesh/xlamesh/shapes"
)

// Element types are gopjrt's dtypes.DType, whose numbers are PJRT's PJRT_Buffer_Type values: the
// one element-type vocabulary of lower, pjrt and jit.

// Supported reports whether pjrt moves arrays of element type d: every array element type of
// PJRT's PJRT_Buffer_Type that gopjrt's dtypes names ([shapes.Supported]). Host memory holds
// them as [shapes.ElementBytes] says: sub-byte types one element a byte.
func Supported(d dtypes.DType) bool { return shapes.Supported(d) }

// DTypeOf returns the element type of a flat Go slice ([]float32, []int64, []bool, ...;
// []bfloat16.BFloat16 is BF16).
func DTypeOf(flat any) (dtypes.DType, error) {
	_, d, err := HostBytes(flat)
	return d, err
}

// HostBytes returns the element type of a flat Go slice and a view of its memory as bytes (no copy).
func HostBytes(flat any) ([]byte, dtypes.DType, error) {
	switch x := flat.(type) {
	case []bool:
		return bytesOf(x), dtypes.Bool, nil
	case []int8:
		return bytesOf(x), dtypes.Int8, nil
	case []int16:
		return bytesOf(x), dtypes.Int16, nil
	case []int32:
		return bytesOf(x), dtypes.Int32, nil
	case []int64:
		return bytesOf(x), dtypes.Int64, nil
	case []uint8:
		return bytesOf(x), dtypes.Uint8, nil
	case []uint16:
		return bytesOf(x), dtypes.Uint16, nil
	case []uint32:
		return bytesOf(x), dtypes.Uint32, nil
	case []uint64:
		return bytesOf(x), dtypes.Uint64, nil
	case []float32:
		return bytesOf(x), dtypes.Float32, nil
	case []float64:
		return bytesOf(x), dtypes.Float64, nil
	case []complex64:
		return bytesOf(x), dtypes.Complex64, nil
	case []complex128:
		return bytesOf(x), dtypes.Complex128, nil
	case []bfloat16.BFloat16:
		return bytesOf(x), dtypes.BFloat16, nil
	}
	return nil, 0, fmt.Errorf("pjrt: %w: host data must be a flat slice of bool, int8..int64, uint8..uint64, "+
		"float32, float64, complex64, complex128 or bfloat16.BFloat16, got %T (use BufferFromBytes for f16, "+
		"the float8 family and the sub-byte types)", ErrHostData, flat)
}

// bytesOf views a slice's memory as bytes, without copying.
func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return []byte{}
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(zero)))
}

// FlatFromBytes copies row-major bytes into a new flat Go slice of element type d ([]uint16
// holding the raw bits for Float16 and BFloat16, []uint8 for the float8 family, f4E2M1FN and
// the sub-byte integers, []complex64 and []complex128 for the complex types). len(data) must
// be a multiple of shapes.ElementBytes(d).
func FlatFromBytes(d dtypes.DType, data []byte) (any, error) {
	if !Supported(d) || len(data)%shapes.ElementBytes(d) != 0 {
		return nil, fmt.Errorf("pjrt: %w: %d bytes are not a whole number of %v elements", ErrHostData, len(data), d)
	}
	flat, raw := hostmem.Flat(d, len(data)/shapes.ElementBytes(d)) // every byte is written just below
	copy(raw, data)
	return flat, nil
}

// Shape is the element type and dimensions of an array (of one shard, for executables). It is
// [shapes.Shape], xlamesh's one shape type, shared with stablehlo, jit and jaxexport; pjrt's
// messages print it as JAX prints avals ([shapes.Shape.Aval], "f32[8,2]").
type Shape = shapes.Shape

// CheckElements checks the host bytes of an array of shape s (len(data) == s.Bytes()) for
// elements XLA cannot hold as given: a sub-byte element (int4, uint4, int2, uint2, f4E2M1FN)
// whose unused high bits are set, which XLA would drop when it packs the array, so that the
// array read back would differ from data. The error wraps ErrHostData and names the element.
// Other element types take any bytes.
func CheckElements(s Shape, data []byte) error {
	bits := shapes.Bits(s.DType())
	if bits >= 8 || s.DType() == dtypes.Bool {
		return nil
	}
	mask := ^byte(1<<bits - 1)
	for i, b := range data {
		if b&mask != 0 {
			return fmt.Errorf("%w: element %d of %s is %#02x, more than %d bits (a sub-byte element is held "+
				"in the low bits of its byte, the rest 0, as ml_dtypes holds it)", ErrHostData, i, s.Aval(), b, bits)
		}
	}
	return nil
}
