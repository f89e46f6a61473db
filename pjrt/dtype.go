package pjrt

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/internal/hostmem"
)

// Element types are gopjrt's dtypes.DType, whose numbers are PJRT's PJRT_Buffer_Type values: the
// one element-type vocabulary of lower, pjrt and jit.

// hostNames are the element types pjrt moves between host and device, with the short names
// JAX prints in avals.
var hostNames = map[dtypes.DType]string{
	dtypes.Bool: "bool", dtypes.Int8: "i8", dtypes.Int16: "i16", dtypes.Int32: "i32", dtypes.Int64: "i64",
	dtypes.Uint8: "u8", dtypes.Uint16: "u16", dtypes.Uint32: "u32", dtypes.Uint64: "u64",
	dtypes.Float16: "f16", dtypes.Float32: "f32", dtypes.Float64: "f64", dtypes.BFloat16: "bf16",
}

// Supported reports whether pjrt moves arrays of element type d: bool, the signed and unsigned
// integers of 8 to 64 bits, f16, bf16, f32 and f64.
func Supported(d dtypes.DType) bool { _, ok := hostNames[d]; return ok }

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

// newFlat allocates a flat slice of n elements of type d; Float16 and BFloat16 get []uint16
// holding the raw bits. d must be Supported.
// Shape is the element type and dimensions of an array (of one shard, for executables).
type Shape struct {
	DType dtypes.DType
	Dims  []int
}

// Size returns the number of elements.
func (s Shape) Size() int {
	n := 1
	for _, d := range s.Dims {
		n *= d
	}
	return n
}

// Bytes returns the size of the array in bytes (0 for an element type pjrt does not support).
func (s Shape) Bytes() int {
	if !Supported(s.DType) {
		return 0
	}
	return s.Size() * s.DType.Size()
}

// Equal reports whether s and t have the same element type and dimensions.
func (s Shape) Equal(t Shape) bool {
	if s.DType != t.DType || len(s.Dims) != len(t.Dims) {
		return false
	}
	for i := range s.Dims {
		if s.Dims[i] != t.Dims[i] {
			return false
		}
	}
	return true
}

// String returns the shape like JAX prints avals: "f32[8,2]", "i64[]".
func (s Shape) String() string {
	var b strings.Builder
	if name, ok := hostNames[s.DType]; ok {
		b.WriteString(name)
	} else {
		b.WriteString(strings.ToLower(s.DType.String()))
	}
	b.WriteByte('[')
	for i, d := range s.Dims {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, d)
	}
	b.WriteByte(']')
	return b.String()
}
