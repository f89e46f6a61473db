package pjrt

import (
	"fmt"
	"unsafe"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/internal/hostmem"
	"github.com/xlamesh/xlamesh/shapes"
)

// Element types are gopjrt's dtypes.DType, whose numbers are PJRT's PJRT_Buffer_Type values: the
// one element-type vocabulary of lower, pjrt and jit.

// Supported reports whether pjrt moves arrays of element type d: bool, the signed and unsigned
// integers of 8 to 64 bits, f16, bf16, f32 and f64 ([shapes.Supported]).
func Supported(d dtypes.DType) bool { return shapes.Supported(d) }

// DTypeOf returns the element type of a flat Go slice ([]float32, []int64, []bool, ...).
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
	}
	return nil, 0, fmt.Errorf("pjrt: %w: host data must be a flat slice of bool, int8..int64, uint8..uint64, "+
		"float32 or float64, got %T (use BufferFromBytes for f16 and bf16)", ErrHostData, flat)
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
// holding the raw bits for Float16 and BFloat16). len(data) must be a multiple of d.Size().
func FlatFromBytes(d dtypes.DType, data []byte) (any, error) {
	if !Supported(d) || len(data)%d.Size() != 0 {
		return nil, fmt.Errorf("pjrt: %w: %d bytes are not a whole number of %v elements", ErrHostData, len(data), d)
	}
	flat, raw := hostmem.Flat(d, len(data)/d.Size()) // every byte is written just below
	copy(raw, data)
	return flat, nil
}

// Shape is the element type and dimensions of an array (of one shard, for executables). It is
// [shapes.Shape], xlamesh's one shape type, shared with stablehlo, jit and jaxexport; pjrt's
// messages print it as JAX prints avals ([shapes.Shape.Aval], "f32[8,2]").
type Shape = shapes.Shape
