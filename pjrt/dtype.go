package pjrt

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/gomlx/gopjrt/dtypes"
)

// Element types are gopjrt's dtypes.DType, whose numbers are PJRT's PJRT_Buffer_Type values: the
// one element-type vocabulary of lower, pjrt and jit.

// hostTypes maps the element types pjrt moves between host and device to their Go slice
// element (nil: raw bytes only, as []uint16 bits on the Go side) and their short name.
var hostTypes = map[dtypes.DType]struct {
	goT  reflect.Type
	name string
}{
	dtypes.Bool:     {reflect.TypeFor[bool](), "bool"},
	dtypes.Int8:     {reflect.TypeFor[int8](), "i8"},
	dtypes.Int16:    {reflect.TypeFor[int16](), "i16"},
	dtypes.Int32:    {reflect.TypeFor[int32](), "i32"},
	dtypes.Int64:    {reflect.TypeFor[int64](), "i64"},
	dtypes.Uint8:    {reflect.TypeFor[uint8](), "u8"},
	dtypes.Uint16:   {reflect.TypeFor[uint16](), "u16"},
	dtypes.Uint32:   {reflect.TypeFor[uint32](), "u32"},
	dtypes.Uint64:   {reflect.TypeFor[uint64](), "u64"},
	dtypes.Float16:  {nil, "f16"},
	dtypes.Float32:  {reflect.TypeFor[float32](), "f32"},
	dtypes.Float64:  {reflect.TypeFor[float64](), "f64"},
	dtypes.BFloat16: {nil, "bf16"},
}

// Supported reports whether pjrt moves arrays of element type d: bool, the signed and unsigned
// integers of 8 to 64 bits, f16, bf16, f32 and f64.
func Supported(d dtypes.DType) bool { _, ok := hostTypes[d]; return ok }

// DTypeOf returns the element type of a flat Go slice ([]float32, []int64, []bool, ...).
func DTypeOf(flat any) (dtypes.DType, error) {
	t := reflect.TypeOf(flat)
	if t == nil || t.Kind() != reflect.Slice {
		return 0, fmt.Errorf("pjrt: %w: host data must be a flat slice, got %T", ErrHostData, flat)
	}
	for d, in := range hostTypes {
		if in.goT == t.Elem() {
			return d, nil
		}
	}
	return 0, fmt.Errorf("pjrt: %w: unsupported element type %s (use []bool, []int8..[]int64, []uint8..[]uint64, []float32, []float64, or BufferFromBytes)", ErrHostData, t.Elem())
}

// HostBytes returns the element type of a flat Go slice and a view of its memory as bytes (no copy).
func HostBytes(flat any) ([]byte, dtypes.DType, error) {
	d, err := DTypeOf(flat)
	if err != nil {
		return nil, 0, err
	}
	return rawBytes(flat), d, nil
}

// FlatFromBytes copies row-major bytes into a new flat Go slice of element type d ([]uint16
// holding the raw bits for Float16 and BFloat16). len(data) must be a multiple of d.Size().
func FlatFromBytes(d dtypes.DType, data []byte) (any, error) {
	if !Supported(d) || len(data)%d.Size() != 0 {
		return nil, fmt.Errorf("pjrt: %w: %d bytes are not a whole number of %v elements", ErrHostData, len(data), d)
	}
	flat := newFlat(d, len(data)/d.Size())
	copy(rawBytes(flat), data)
	return flat, nil
}

// rawBytes views a flat slice's memory as bytes, without copying.
func rawBytes(flat any) []byte {
	v := reflect.ValueOf(flat)
	n := v.Len() * int(v.Type().Elem().Size())
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(v.UnsafePointer()), n)
}

// newFlat allocates a flat slice of n elements of type d; for types without a Go type here
// (Float16, BFloat16) it returns []uint16 holding the raw bits.
func newFlat(d dtypes.DType, n int) any {
	t := hostTypes[d].goT
	if t == nil {
		return make([]uint16, n)
	}
	return reflect.MakeSlice(reflect.SliceOf(t), n, n).Interface()
}

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
	if in, ok := hostTypes[s.DType]; ok {
		b.WriteString(in.name)
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
