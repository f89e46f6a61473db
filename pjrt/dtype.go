package pjrt

import (
	"fmt"
	"reflect"
	"strings"
	"unsafe"
)

// DType is an array element type. Its values are PJRT's PJRT_Buffer_Type numbers; String gives
// the MLIR element type name used in StableHLO text ("f32", "i64", "ui8", "i1").
type DType int32

// The element types xlamesh moves between host and device.
const (
	Pred DType = 1  // bool, MLIR i1
	S8   DType = 2  // int8
	S16  DType = 3  // int16
	S32  DType = 4  // int32
	S64  DType = 5  // int64
	U8   DType = 6  // uint8
	U16  DType = 7  // uint16
	U32  DType = 8  // uint32
	U64  DType = 9  // uint64
	F16  DType = 10 // IEEE half; host data as raw bytes (BufferFromBytes)
	F32  DType = 11 // float32
	F64  DType = 12 // float64
	BF16 DType = 13 // bfloat16; host data as raw bytes (BufferFromBytes)
)

var dtypeInfo = map[DType]struct {
	mlir string
	size int
	goT  reflect.Type // nil: raw bytes only
}{
	Pred: {"i1", 1, reflect.TypeFor[bool]()},
	S8:   {"i8", 1, reflect.TypeFor[int8]()},
	S16:  {"i16", 2, reflect.TypeFor[int16]()},
	S32:  {"i32", 4, reflect.TypeFor[int32]()},
	S64:  {"i64", 8, reflect.TypeFor[int64]()},
	U8:   {"ui8", 1, reflect.TypeFor[uint8]()},
	U16:  {"ui16", 2, reflect.TypeFor[uint16]()},
	U32:  {"ui32", 4, reflect.TypeFor[uint32]()},
	U64:  {"ui64", 8, reflect.TypeFor[uint64]()},
	F16:  {"f16", 2, nil},
	F32:  {"f32", 4, reflect.TypeFor[float32]()},
	F64:  {"f64", 8, reflect.TypeFor[float64]()},
	BF16: {"bf16", 2, nil},
}

// String returns the MLIR element type name, e.g. "f32".
func (d DType) String() string {
	if in, ok := dtypeInfo[d]; ok {
		return in.mlir
	}
	return fmt.Sprintf("DType(%d)", int32(d))
}

// Size returns the size of one element in bytes, or 0 for an unknown dtype.
func (d DType) Size() int { return dtypeInfo[d].size }

// Valid reports whether d is one of the dtypes above.
func (d DType) Valid() bool { _, ok := dtypeInfo[d]; return ok }

// ParseDType reads an MLIR element type name ("f32", "i1", "ui8", "bf16") or a Go/NumPy style
// name ("float32", "bool", "int64", "uint8", "bfloat16").
func ParseDType(name string) (DType, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	alias := map[string]string{"bool": "i1", "pred": "i1", "int8": "i8", "int16": "i16", "int32": "i32",
		"int64": "i64", "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64",
		"float16": "f16", "float32": "f32", "float64": "f64", "bfloat16": "bf16",
		"s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64", "u8": "ui8", "u16": "ui16", "u32": "ui32", "u64": "ui64"}
	if a, ok := alias[n]; ok {
		n = a
	}
	for d, in := range dtypeInfo {
		if in.mlir == n {
			return d, nil
		}
	}
	return 0, fmt.Errorf("pjrt: %w: unknown dtype %q", ErrHostData, name)
}

// DTypeOf returns the dtype of a flat Go slice ([]float32, []int64, []bool, ...).
func DTypeOf(flat any) (DType, error) {
	t := reflect.TypeOf(flat)
	if t == nil || t.Kind() != reflect.Slice {
		return 0, fmt.Errorf("pjrt: %w: host data must be a flat slice, got %T", ErrHostData, flat)
	}
	for d, in := range dtypeInfo {
		if in.goT == t.Elem() {
			return d, nil
		}
	}
	return 0, fmt.Errorf("pjrt: %w: unsupported element type %s (use []bool, []int8..[]int64, []uint8..[]uint64, []float32, []float64, or BufferFromBytes)", ErrHostData, t.Elem())
}

// HostBytes returns the dtype of a flat Go slice and a view of its memory as bytes (no copy).
func HostBytes(flat any) ([]byte, DType, error) {
	d, err := DTypeOf(flat)
	if err != nil {
		return nil, 0, err
	}
	return rawBytes(flat), d, nil
}

// FlatFromBytes copies row-major bytes into a new flat Go slice of dtype d ([]uint16 holding the
// raw bits for F16 and BF16). len(data) must be a multiple of d.Size().
func FlatFromBytes(d DType, data []byte) (any, error) {
	if !d.Valid() || len(data)%d.Size() != 0 {
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

// newFlat allocates a flat slice of n elements of dtype d; for dtypes without a Go type
// (F16, BF16) it returns []uint16 holding the raw bits.
func newFlat(d DType, n int) any {
	t := dtypeInfo[d].goT
	if t == nil {
		return make([]uint16, n)
	}
	return reflect.MakeSlice(reflect.SliceOf(t), n, n).Interface()
}

// Shape is the element type and dimensions of an array (of one shard, for executables).
type Shape struct {
	DType DType
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

// Bytes returns the size of the array in bytes.
func (s Shape) Bytes() int { return s.Size() * s.DType.Size() }

// Equal reports whether s and t have the same dtype and dimensions.
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
	b.WriteString(s.DType.String())
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
