package stablehlo_test

import (
	"errors"
	"math"
	"math/cmplx"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestComplexText: the ops on complex values print as StableHLO writes them, constants of
// complex and float8 types included.
func TestComplexText(t *testing.T) {
	m := stablehlo.NewModule("c")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Complex64, 2))
	r := f.Arg(stablehlo.NewShape(dtypes.Float32, 8))
	z := f.Mul(x, f.Constant(complex64(1+2i)))
	z = f.Add(z, f.Constant(0.5)) // a weak constant takes the complex type
	f.Return(f.Real(z), f.Imag(z), f.Conj(z), f.Abs(z), f.FFT(r, stablehlo.RFFT, 8),
		f.Full(stablehlo.NewShape(dtypes.F8E4M3FN, 3), 1.5), f.Convert(r, dtypes.F8E5M2))
	text, err := m.Build()
	require.NoError(t, err)
	for _, want := range []string{
		"stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f32>>",
		"stablehlo.constant dense<(0.5, 0.0)> : tensor<2xcomplex<f32>>",
		`"stablehlo.real"(%4)`, `"stablehlo.imag"(%4)`, `"stablehlo.negate"(%8)`,
		`"stablehlo.complex"(%7, %9) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xcomplex<f32>>`,
		`"stablehlo.abs"(%4) : (tensor<2xcomplex<f32>>) -> tensor<2xf32>`,
		"fft_type = #stablehlo<fft_type RFFT>, fft_length = array<i64: 8>",
		"-> tensor<5xcomplex<f32>>",
		"stablehlo.constant dense<1.5> : tensor<3xf8E4M3FN>",
		"(tensor<8xf32>) -> tensor<8xf8E5M2>",
	} {
		assert.Contains(t, text, want)
	}
}

// TestComplexErrors: what StableHLO or XLA does not define on these types is an error wrapping
// ErrDType or ErrShape that says why, never a module XLA refuses or reads otherwise.
func TestComplexErrors(t *testing.T) {
	c64 := stablehlo.NewShape(dtypes.Complex64, 4)
	for _, tc := range []struct {
		name  string
		build func(f *stablehlo.Function) stablehlo.Value
		err   error
		msg   string
	}{
		{"max of complex", func(f *stablehlo.Function) stablehlo.Value {
			x := f.Arg(c64)
			return f.Max(x, x)
		}, stablehlo.ErrDType, "maximum needs non-complex operands, got c64"},
		{"less than on complex", func(f *stablehlo.Function) stablehlo.Value {
			x := f.Arg(c64)
			return f.Less(x, x)
		}, stablehlo.ErrDType, "complex values compare only for EQ and NE, not LT"},
		{"complex to real convert", func(f *stablehlo.Function) stablehlo.Value {
			return f.Convert(f.Arg(c64), dtypes.Float32)
		}, stablehlo.ErrDType, "converting c64 to f32 would drop the imaginary part; take Real first"},
		{"max reduction of complex", func(f *stablehlo.Function) stablehlo.Value {
			return f.Reduce(f.Arg(c64), stablehlo.Max, 0)
		}, stablehlo.ErrDType, "no identity element of type c64 for this reduction"},
		{"max reduction of float8", func(f *stablehlo.Function) stablehlo.Value {
			return f.Reduce(f.Arg(stablehlo.NewShape(dtypes.F8E4M3FN, 4)), stablehlo.Max, 0)
		}, stablehlo.ErrDType, "no identity element of type f8e4m3fn"},
		{"sum of f8E8M0FNU", func(f *stablehlo.Function) stablehlo.Value {
			return f.Reduce(f.Arg(stablehlo.NewShape(dtypes.F8E8M0FNU, 4)), stablehlo.Sum, 0)
		}, stablehlo.ErrDType, "no identity element of type f8e8m0fnu"},
		{"float8 constant out of range", func(f *stablehlo.Function) stablehlo.Value {
			return f.Full(stablehlo.NewShape(dtypes.F8E4M3FN, 2), 1000.0)
		}, stablehlo.ErrDType, "constant 1000 is not a finite f8e4m3fn (largest 448)"},
		{"float8 NaN constant", func(f *stablehlo.Function) stablehlo.Value {
			return f.Full(stablehlo.NewShape(dtypes.F8E5M2, 2), math.NaN())
		}, stablehlo.ErrDType, "constant NaN is not a finite f8e5m2"},
		{"int4 constant out of range", func(f *stablehlo.Function) stablehlo.Value {
			return f.Full(stablehlo.NewShape(dtypes.S4, 2), 8)
		}, stablehlo.ErrDType, "constant 8 overflows s4"},
		{"complex constant for a float", func(f *stablehlo.Function) stablehlo.Value {
			return f.Full(stablehlo.NewShape(dtypes.Float32, 2), complex64(1i))
		}, stablehlo.ErrDType, "complex constant for f32"},
		{"complex of f16 parts", func(f *stablehlo.Function) stablehlo.Value {
			x := f.Arg(stablehlo.NewShape(dtypes.Float16, 2))
			return f.Complex(x, x)
		}, stablehlo.ErrDType, "complex needs f32 or f64 parts, got f16"},
		{"FFT of a real operand", func(f *stablehlo.Function) stablehlo.Value {
			return f.FFT(f.Arg(stablehlo.NewShape(dtypes.Float32, 8)), stablehlo.FFT, 8)
		}, stablehlo.ErrDType, "FFT needs a complex operand, got f32"},
		{"FFT length not the dimension", func(f *stablehlo.Function) stablehlo.Value {
			return f.FFT(f.Arg(stablehlo.NewShape(dtypes.Complex64, 2, 8)), stablehlo.FFT, 4)
		}, stablehlo.ErrShape, "FFT of tensor<2x8xcomplex<f32>> needs fft_length [8], got [4]"},
		{"IRFFT of the wrong last dimension", func(f *stablehlo.Function) stablehlo.Value {
			return f.FFT(f.Arg(stablehlo.NewShape(dtypes.Complex64, 8)), stablehlo.IRFFT, 8)
		}, stablehlo.ErrShape, "needs its last dimensions to be [5]"},
		{"FFT over four dimensions", func(f *stablehlo.Function) stablehlo.Value {
			return f.FFT(f.Arg(stablehlo.NewShape(dtypes.Complex64, 2, 2, 2, 2)), stablehlo.FFT, 2, 2, 2, 2)
		}, stablehlo.ErrShape, "an FFT over 4 dimensions"},
		{"exp of int", func(f *stablehlo.Function) stablehlo.Value {
			return f.Exp(f.Arg(stablehlo.NewShape(dtypes.Int32, 2)))
		}, stablehlo.ErrDType, "exponential needs float or complex operands, got s32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("e")
			f := m.Main()
			f.Return(tc.build(f))
			_, err := m.Build()
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.err), "%v", err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// TestComplex128Runs runs complex128 arithmetic, parts and a forward and inverse FFT on the
// CPU plugin (the oracle's JAX runs without x64, so complex128 is checked here against Go's
// own complex arithmetic).
func TestComplex128Runs(t *testing.T) {
	c := pjrttest.Client(t)
	m := stablehlo.NewModule("c128")
	f := m.Main()
	s := stablehlo.NewShape(dtypes.Complex128, 4)
	x, y := f.Arg(s), f.Arg(s)
	back := f.FFT(f.FFT(x, stablehlo.FFT, 4), stablehlo.IFFT, 4)
	f.Return(f.Add(f.Mul(x, y), f.Conj(x)), f.Abs(y), f.Real(x), back)
	text, err := m.Build()
	require.NoError(t, err)
	xs := []complex128{1 + 2i, -0.5i, 3, -1 - 1i}
	ys := []complex128{2 - 1i, 4 + 0.25i, 0.5i, 1}
	got := run1(t, c, program{text, []stablehlo.Shape{s, s}}, xs, ys)
	for i := range xs {
		assert.Equal(t, xs[i]*ys[i]+cmplx.Conj(xs[i]), got[0].([]complex128)[i], "x*y+conj(x) [%d]", i)
		assert.InDelta(t, cmplx.Abs(ys[i]), got[1].([]float64)[i], 1e-15, "abs(y) [%d]", i)
		assert.Equal(t, real(xs[i]), got[2].([]float64)[i], "real(x) [%d]", i)
		assert.InDelta(t, 0, cmplx.Abs(xs[i]-got[3].([]complex128)[i]), 1e-15, "ifft(fft(x)) [%d]", i)
	}
	require.False(t, strings.Contains(text, "invalid"))
}
