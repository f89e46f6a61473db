package shapes_test

import (
	"errors"
	"fmt"
	"math"
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
		{shapes.Make(dtypes.Complex64, 2), "tensor<2xcomplex<f32>>", "c64[2]", 1, 2, 16},
		{shapes.Make(dtypes.F8E4M3FN, 3), "tensor<3xf8E4M3FN>", "f8_e4m3fn[3]", 1, 3, 3},
		{shapes.Make(dtypes.S4, 5), "tensor<5xi4>", "i4[5]", 1, 5, 5},
		{shapes.Make(dtypes.TOKEN, 2), "tensor<2xinvalid>", "token[2]", 1, 2, 0},
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

// TestSupported: every array element type of PJRT that dtypes names, with four names, its
// width and its host size; names read back with ParseDType; not the token or invalid types.
func TestSupported(t *testing.T) {
	var n int
	for d := range dtypes.DType(64) {
		if !shapes.Supported(d) {
			if shapes.MLIRName(d) != "invalid" || shapes.Bits(d) != 0 || shapes.ElementBytes(d) != 0 {
				t.Errorf("%v: names or sizes without support", d)
			}
			continue
		}
		n++
		for _, name := range []string{shapes.MLIRName(d), shapes.XLAName(d)} {
			if got, err := shapes.ParseDType(name); err != nil || got != d {
				t.Errorf("ParseDType(%q) = %v, %v; want %v", name, got, err, d)
			}
		}
		if kinds := btoi(shapes.IsFloat(d)) + btoi(shapes.IsComplex(d)) + btoi(shapes.IsSigned(d)) + btoi(shapes.IsUnsigned(d)); kinds != 1 && d != dtypes.Bool {
			t.Errorf("%v is of %d kinds", d, kinds)
		}
		if shapes.IsInexact(d) != (shapes.IsFloat(d) || shapes.IsComplex(d)) {
			t.Errorf("IsInexact(%v) = %v", d, shapes.IsInexact(d))
		}
		if shapes.ElementBytes(d) != max(1, shapes.Bits(d)/8) {
			t.Errorf("%v: %d bits, %d host bytes", d, shapes.Bits(d), shapes.ElementBytes(d))
		}
	}
	if n != 28 || shapes.Supported(dtypes.InvalidDType) || shapes.Supported(dtypes.TOKEN) {
		t.Errorf("%d supported element types, want 28 (not invalid, not token)", n)
	}
	for d, want := range map[dtypes.DType][5]any{
		dtypes.Bool:       {"i1", "pred", "bool", 8, 1},
		dtypes.Complex128: {"complex<f64>", "c128", "c128", 128, 16},
		dtypes.F8E5M2FNUZ: {"f8E5M2FNUZ", "f8e5m2fnuz", "f8_e5m2fnuz", 8, 1},
		dtypes.U2:         {"ui2", "u2", "u2", 2, 1},
		dtypes.F4E2M1FN:   {"f4E2M1FN", "f4e2m1fn", "f4_e2m1fn", 4, 1},
	} {
		got := [5]any{shapes.MLIRName(d), shapes.XLAName(d), shapes.AvalName(d), shapes.Bits(d), shapes.ElementBytes(d)}
		if got != want {
			t.Errorf("%v: %v, want %v", d, got, want)
		}
	}
	for _, bad := range []string{"", "c32", "complex64", "float32", "i3", "F32"} {
		if _, err := shapes.ParseDType(bad); !errors.Is(err, shapes.ErrUnknownDType) {
			t.Errorf("ParseDType(%q): %v, want ErrUnknownDType", bad, err)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestParseTensorType reads back what String writes, and refuses the rest.
func TestParseTensorType(t *testing.T) {
	for d := range dtypes.DType(32) {
		if !shapes.Supported(d) {
			continue
		}
		for _, s := range []shapes.Shape{shapes.Make(d), shapes.Make(d, 8, 8), shapes.Make(d, 0, 1, 3)} {
			got, err := shapes.ParseTensorType(s.String())
			if err != nil || !got.Equal(s) {
				t.Errorf("ParseTensorType(%q) = %v, %v", s.String(), got, err)
			}
		}
	}
	for _, bad := range []string{"tensor<?x4xf32>", "tensor<-1xf32>", "memref<4xf32>", "tensor<4xc32>", "tensor<>",
		"tensor<4x>", "tensor<4xf32", "tensor<4xf32, #enc>", "tensor<99999999999999999999xf32>"} {
		if s, err := shapes.ParseTensorType(bad); err == nil {
			t.Errorf("ParseTensorType(%q) = %v, want an error", bad, s)
		}
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
		dtypes.Complex64: "complex64", dtypes.Complex128: "complex128", dtypes.F8E4M3FN: "float8_e4m3fn",
		dtypes.S4: "int4", dtypes.F4E2M1FN: "float4_e2m1fn", dtypes.TOKEN: "token",
	} {
		if got := shapes.NumPyName(d); got != want {
			t.Errorf("NumPyName(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestHalfValues: f16 and bf16 bits read as IEEE and bfloat16 say, at the edges of each
// format, and every positive finite f16 larger than the one before it.
func TestHalfValues(t *testing.T) {
	for bits, want := range map[uint16]float32{
		0x0000: 0, 0x3C00: 1, 0xC000: -2, 0x3555: 0.333251953125, 0x7BFF: 65504, 0x0001: 0x1p-24, 0x03FF: 1023 * 0x1p-24,
		0x0400: 0x1p-14, 0x7C00: float32(math.Inf(1)), 0xFC00: float32(math.Inf(-1)),
	} {
		if got := shapes.Float16Value(bits); got != want {
			t.Errorf("f16 %#04x: got %v, want %v", bits, got, want)
		}
	}
	if got := shapes.Float16Value(0x8000); got != 0 || !math.Signbit(float64(got)) {
		t.Errorf("f16 0x8000: got %v, want -0", got)
	}
	for _, bits := range []uint16{0x7E00, 0xFC01, 0x7C01} {
		if got := shapes.Float16Value(bits); !math.IsNaN(float64(got)) {
			t.Errorf("f16 %#04x: got %v, want NaN", bits, got)
		}
	}
	for b := uint16(1); b <= 0x7BFF; b++ {
		if shapes.Float16Value(b) <= shapes.Float16Value(b-1) {
			t.Fatalf("f16 %#04x is not larger than %#04x", b, b-1)
		}
	}
	for bits, want := range map[uint16]float32{0x3F80: 1, 0xC000: -2, 0x7F7F: 0x1.fep127, 0x0001: 0x1p-133, 0x7F80: float32(math.Inf(1))} {
		if got := shapes.BFloat16Value(bits); got != want {
			t.Errorf("bf16 %#04x: got %v, want %v", bits, got, want)
		}
	}
}
