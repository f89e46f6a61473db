// Package hostmem allocates Go memory for host copies that overwrite every byte of it, without
// zeroing it first.
//
// make([]byte, n) clears memory the Go heap reuses, on the allocating goroutine: for the 256 MiB
// result of a device-to-host copy that is a second pass over memory as long as the copy, and a
// single-threaded one, while the copy itself runs on every core. Bytes skips it, the way the
// standard library's strings.Builder does, through runtime.mallocgc with needzero false (one of
// the runtime functions the Go team keeps reachable by linkname; see go.dev/issue/67401).
//
// The memory holds no pointers (the GC does not scan it) and its contents are undefined: a caller
// writes every byte before anything reads one, or drops the slice.
package hostmem

import (
	"unsafe"

	"github.com/gomlx/gopjrt/dtypes"
)

// minSize is the size below which Bytes uses make: clearing small blocks costs nothing worth
// the trouble.
const minSize = 64 << 10

//go:linkname mallocgc runtime.mallocgc
func mallocgc(size uintptr, typ unsafe.Pointer, needzero bool) unsafe.Pointer

// Bytes returns n bytes of Go memory whose contents are undefined (zero for n below 64 KiB).
func Bytes(n int) []byte {
	if n < minSize {
		return make([]byte, n)
	}
	return unsafe.Slice((*byte)(mallocgc(uintptr(n), nil, false)), n)
}

// Flat returns a flat Go slice of n elements of type d, the slice types pjrt's HostBytes takes
// ([]uint16 for Float16, BFloat16 and Uint16; []uint8 for Uint8, the float8 family, f4E2M1FN
// and the sub-byte integers, one element a byte), and its memory as bytes, with contents undefined
// as for Bytes; nil, nil for a type pjrt does not move.
func Flat(d dtypes.DType, n int) (any, []byte) {
	if n < 0 {
		return nil, nil
	}
	switch d {
	case dtypes.Bool:
		return flat[bool](n)
	case dtypes.Int8:
		return flat[int8](n)
	case dtypes.Int16:
		return flat[int16](n)
	case dtypes.Int32:
		return flat[int32](n)
	case dtypes.Int64:
		return flat[int64](n)
	case dtypes.Uint8, dtypes.F8E5M2, dtypes.F8E4M3FN, dtypes.F8E4M3B11FNUZ, dtypes.F8E5M2FNUZ, dtypes.F8E4M3FNUZ,
		dtypes.F8E4M3, dtypes.F8E3M4, dtypes.F8E8M0FNU, dtypes.F4E2M1FN, dtypes.S4, dtypes.U4, dtypes.S2, dtypes.U2:
		return flat[uint8](n)
	case dtypes.Uint16, dtypes.Float16, dtypes.BFloat16:
		return flat[uint16](n)
	case dtypes.Uint32:
		return flat[uint32](n)
	case dtypes.Uint64:
		return flat[uint64](n)
	case dtypes.Float32:
		return flat[float32](n)
	case dtypes.Float64:
		return flat[float64](n)
	case dtypes.Complex64:
		return flat[complex64](n)
	case dtypes.Complex128:
		return flat[complex128](n)
	}
	return nil, nil
}

// flat makes a []T of n elements over Bytes.
func flat[T any](n int) (any, []byte) {
	var z T
	raw := Bytes(n * int(unsafe.Sizeof(z)))
	if n == 0 {
		return []T{}, raw
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(raw))), n), raw
}
