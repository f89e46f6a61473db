package shapes_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

func TestShape(t *testing.T) {
	for _, tc := range []struct {
		s                 shapes.Shape
		text, aval        string
		rank, size, bytes int
	}{
		{shapes.Make(dtypes.Float32, 8, 2), "tensor<8x2xf32>", "f32[8,2]", 2, 16, 64},
		{shapes.Make(dtypes.Bool), "tensor<i1>", "bool[]", 0, 1, 1},
		{shapes.Make(dtypes.Uint8, 3), "tensor<3xui8>", "u8[3]", 1, 3, 3},
		{shapes.Make(dtypes.BFloat16, 2, 0, 4), "tensor<2x0x4xbf16>", "bf16[2,0,4]", 3, 0, 0},
		{shapes.Make(dtypes.Int64, 5), "tensor<5xi64>", "i64[5]", 1, 5, 40},
		{shapes.Make(dtypes.Complex64, 2), "tensor<2xinvalid>", "c64[2]", 1, 2, 0},
		{shapes.Shape{}, "tensor<invalid>", "invaliddtype[]", 0, 1, 0},
	} {
		if got := tc.s.String(); got != tc.text {
			t.Errorf("String() = %q, want %q", got, tc.text)
		}
		if got := tc.s.Aval(); got != tc.aval {
			t.Errorf("%s: Aval() = %q, want %q", tc.text, got, tc.aval)
		}
		if tc.s.Rank() != tc.rank || tc.s.Size() != tc.size || tc.s.Bytes() != tc.bytes {
			t.Errorf("%s: rank %d, size %d, bytes %d; want %d, %d, %d", tc.text, tc.s.Rank(), tc.s.Size(), tc.s.Bytes(), tc.rank, tc.size, tc.bytes)
		}
	}
}

func TestValueSemantics(t *testing.T) {
	dims := []int{4, 2}
	s := shapes.Make(dtypes.Float32, dims...)
	dims[0] = 99
	s.Dims()[1] = 99
	_ = s.AppendDims(make([]int, 0, 8))
	if got := s.Dims(); !reflect.DeepEqual(got, []int{4, 2}) || s.Dim(0) != 4 || s.Dim(1) != 2 {
		t.Errorf("Dims() = %v after writes to the caller's slices, want [4 2]", got)
	}
	if got := s.AppendDims([]int{1}); !reflect.DeepEqual(got, []int{1, 4, 2}) {
		t.Errorf("AppendDims([1]) = %v", got)
	}
	i := s.WithDType(dtypes.Int32)
	if i.String() != "tensor<4x2xi32>" || s.String() != "tensor<4x2xf32>" {
		t.Errorf("WithDType: %v from %v", i, s)
	}
	if !s.Equal(shapes.Make(dtypes.Float32, 4, 2)) || s.Equal(i) || s.Equal(shapes.Make(dtypes.Float32, 4)) || !s.EqualDims([]int{4, 2}) {
		t.Error("Equal or EqualDims disagree with the dims and element type")
	}
	// One representation per shape: reflect.DeepEqual (testify's Equal) agrees with Equal for scalars.
	if !reflect.DeepEqual(shapes.Make(dtypes.Int32), shapes.Make(dtypes.Int32, []int{}...)) {
		t.Error("a scalar made from an empty slice differs from one made from none")
	}
}

func TestSupported(t *testing.T) {
	var n int
	for d := range dtypes.DType(64) {
		if shapes.Supported(d) {
			n++
			if shapes.MLIRName(d) == "invalid" || shapes.AvalName(d) == "" {
				t.Errorf("%v: supported without names", d)
			}
		}
	}
	if n != 13 || shapes.Supported(dtypes.InvalidDType) || shapes.Supported(dtypes.Complex64) || shapes.MLIRName(dtypes.F8E4M3FN) != "invalid" {
		t.Errorf("%d supported element types, want 13 (no invalid, complex or f8)", n)
	}
}

func ExampleShape() {
	s := shapes.Make(dtypes.Float32, 8, 2)
	fmt.Println(s, s.Aval(), s.Size(), s.Bytes())
	// Output: tensor<8x2xf32> f32[8,2] 16 64
}

func TestNumPyName(t *testing.T) {
	for d, want := range map[dtypes.DType]string{
		dtypes.Bool: "bool", dtypes.Int8: "int8", dtypes.Uint64: "uint64", dtypes.Float16: "float16",
		dtypes.BFloat16: "bfloat16", dtypes.Float32: "float32", dtypes.Float64: "float64",
		dtypes.Complex64: "complex64", dtypes.Complex128: "complex128", dtypes.F8E4M3FN: "f8e4m3fn",
	} {
		if got := shapes.NumPyName(d); got != want {
			t.Errorf("NumPyName(%v) = %q, want %q", d, got, want)
		}
	}
}
