package jit

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/gomlx/gopjrt/dtypes/bfloat16"

	"github.com/xlamesh/xlamesh/internal/hostmem"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/shapes"
)

// HostElement is a Go type ToHostAs and Item read an array's elements as.
type HostElement interface {
	bool | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64 |
		complex64 | complex128 | bfloat16.BFloat16
}

// ToHostAs is ToHost typed, for the element type the caller expects: np.asarray(x) read as
// []T. T is the Go type of the array's dtype as ToHost returns it (float32 for F32, int64
// for S64, bool for Pred, complex64 for C64, uint16 raw bits for F16 and BF16, uint8 raw
// bits for the float8 family and the sub-byte types), or, for a BF16 or F16 array, float32
// (each element widened, exactly) or, for BF16, bfloat16.BFloat16. Any other T is an error
// wrapping pjrt.ErrHostData that names both types; the array is not read then.
func ToHostAs[T HostElement](a *Array) ([]T, error) {
	if a == nil {
		return nil, fmt.Errorf("jit: to host: %w: nil *Array", ErrNil)
	}
	var z T
	conv := hostConversion[T](a.dtype)
	if conv == nil {
		return nil, fmt.Errorf("jit: to host as %T: %w: the array is %s, whose elements read as %s", z, pjrt.ErrHostData,
			shapes.Make(a.dtype, a.shape...).Aval(), hostTypeName(a.dtype))
	}
	flat, err := a.ToHost()
	if err != nil {
		return nil, err
	}
	return conv(flat), nil
}

// Item returns the one element of an array of one element (a scalar, or any shape of size 1),
// typed as ToHostAs says: JAX's x.item(). An array of another size is an error wrapping
// pjrt.ErrHostData.
func Item[T HostElement](a *Array) (T, error) {
	var z T
	if a == nil {
		return z, fmt.Errorf("jit: item: %w: nil *Array", ErrNil)
	}
	if n := shapes.Make(a.dtype, a.shape...).Size(); n != 1 {
		return z, fmt.Errorf("jit: item: %w: the array is %s, of %d elements; Item reads arrays of one",
			pjrt.ErrHostData, shapes.Make(a.dtype, a.shape...).Aval(), n)
	}
	xs, err := ToHostAs[T](a)
	if err != nil {
		return z, err
	}
	return xs[0], nil
}

// hostConversion returns how ToHost's flat slice of dtype d becomes a []T, or nil when T is
// not a type d reads as.
func hostConversion[T HostElement](d dtypes.DType) func(flat any) []T {
	var z T
	switch any(z).(type) {
	case float32:
		if d == dtypes.BFloat16 || d == dtypes.Float16 {
			value := shapes.Float16Value
			if d == dtypes.BFloat16 {
				value = shapes.BFloat16Value
			}
			return func(flat any) []T {
				bits := flat.([]uint16)
				out := make([]T, len(bits))
				for i, b := range bits {
					out[i] = any(value(b)).(T)
				}
				return out
			}
		}
	case bfloat16.BFloat16:
		if d == dtypes.BFloat16 {
			return func(flat any) []T {
				bits := flat.([]uint16)
				out := make([]T, len(bits))
				for i, b := range bits {
					out[i] = any(bfloat16.BFloat16(b)).(T)
				}
				return out
			}
		}
		return nil
	}
	flat, _ := hostmem.Flat(d, 0)
	if _, ok := flat.([]T); !ok {
		return nil
	}
	return func(flat any) []T { return flat.([]T) }
}

// hostTypeName names the Go element type ToHost returns for dtype d.
func hostTypeName(d dtypes.DType) string {
	flat, _ := hostmem.Flat(d, 0)
	if flat == nil {
		return "no Go type"
	}
	return fmt.Sprintf("%T", flat)[2:]
}
