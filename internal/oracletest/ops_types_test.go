package oracletest

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestOpsTypes compares the builder's ops on complex, float8, float4 and int4 values with the
// same JAX ops (testdata/oracle/ops_types.json, by tools/oracle/ops_types.py).
func TestOpsTypes(t *testing.T) {
	runOpsGroup(t, "ops_types", "Each case builds ops on complex, float8, float4 and int4 values with package "+
		"`stablehlo` and runs them on the pinned CPU plugin on the inputs JAX was given (tools/oracle/ops_types.py). "+
		"complex64 compares as float32 (real, imaginary) pairs: bit for bit, except the transcendental functions and "+
		"the FFTs at 1e-6 relative; float8, float4 and int4 compare bit for bit.", opsTypesBuilders())
}

func opsTypesBuilders() map[string]opsBuilder {
	many := func(call string, tol float64, build func(f *stablehlo.Function, a []sv) []sv) opsBuilder {
		return opsBuilder{call: call, build: build, tol: tol}
	}
	b := map[string]opsBuilder{
		"complex_arith": many("Add, Sub, Mul, Div, Neg", 0, func(f *stablehlo.Function, a []sv) []sv {
			return []sv{f.Add(a[0], a[1]), f.Sub(a[0], a[1]), f.Mul(a[0], a[1]), f.Div(a[0], a[1]), f.Neg(a[0])}
		}),
		"complex_parts": many("Real, Imag, Conj, Abs", 0, func(f *stablehlo.Function, a []sv) []sv {
			return []sv{f.Real(a[0]), f.Imag(a[0]), f.Conj(a[0]), f.Abs(a[0])}
		}),
		"complex_make": op1("Complex(re, im)", func(f *stablehlo.Function, a []sv) sv { return f.Complex(a[0], a[1]) }),
		"complex_transcendental": many("Exp, Log, Sqrt, Tanh, Sin, Cos", 1e-6, func(f *stablehlo.Function, a []sv) []sv {
			x := a[0]
			return []sv{f.Exp(x), f.Log(x), f.Sqrt(x), f.Tanh(x), f.Sin(x), f.Cos(x)}
		}),
		"complex_compare": many("Equal, Compare(NE), Equal(x, x)", 0, func(f *stablehlo.Function, a []sv) []sv {
			return []sv{f.Equal(a[0], a[1]), f.Compare(a[0], a[1], stablehlo.NE), f.Equal(a[0], a[0])}
		}),
		"complex_reduce_dot": many("Reduce(Sum, 1), Reduce(Prod, 0), DotGeneral(x, y, contract 1 with 1)", 1e-6, func(f *stablehlo.Function, a []sv) []sv {
			dot := f.DotGeneral(a[0], a[1], stablehlo.DotDims{LhsContracting: []int{1}, RhsContracting: []int{1}})
			return []sv{f.Reduce(a[0], stablehlo.Sum, 1), f.Reduce(a[0], stablehlo.Prod, 0), dot}
		}),
		"fft": many("FFT(x, FFT, 8), FFT(x, IFFT, 8)", 1e-6, func(f *stablehlo.Function, a []sv) []sv {
			return []sv{f.FFT(a[0], stablehlo.FFT, 8), f.FFT(a[0], stablehlo.IFFT, 8)}
		}),
		"rfft_irfft": many("FFT(r, RFFT, 8), FFT(z, IRFFT, 8)", 1e-6, func(f *stablehlo.Function, a []sv) []sv {
			return []sv{f.FFT(a[0], stablehlo.RFFT, 8), f.FFT(a[1], stablehlo.IRFFT, 8)}
		}),
		"fft2": many("FFT(x, FFT, 4, 4), FFT(x, IFFT, 4, 4)", 1e-6, func(f *stablehlo.Function, a []sv) []sv {
			return []sv{f.FFT(a[0], stablehlo.FFT, 4, 4), f.FFT(a[0], stablehlo.IFFT, 4, 4)}
		}),
		"convert_int4": many("Convert(x, S4), Convert(x, U4), Convert(Convert(x, S4), Int32)", 0, func(f *stablehlo.Function, a []sv) []sv {
			s4 := f.Convert(a[0], dtypes.S4)
			return []sv{s4, f.Convert(a[0], dtypes.U4), f.Convert(s4, dtypes.Int32)}
		}),
		"float8_arith": many("Add, Mul, Sub on f8E4M3FN", 0, func(f *stablehlo.Function, a []sv) []sv {
			return []sv{f.Add(a[0], a[1]), f.Mul(a[0], a[1]), f.Sub(a[0], a[1])}
		}),
	}
	for name, d := range map[string]dtypes.DType{
		"float8_e5m2": dtypes.F8E5M2, "float8_e4m3fn": dtypes.F8E4M3FN, "float8_e4m3b11fnuz": dtypes.F8E4M3B11FNUZ,
		"float8_e5m2fnuz": dtypes.F8E5M2FNUZ, "float8_e4m3fnuz": dtypes.F8E4M3FNUZ, "float8_e4m3": dtypes.F8E4M3,
		"float8_e3m4": dtypes.F8E3M4, "float8_e8m0fnu": dtypes.F8E8M0FNU, "float4_e2m1fn": dtypes.F4E2M1FN,
	} {
		b["convert_"+name] = many("Convert(x, "+d.String()+"), Convert of that to Float32", 0, func(f *stablehlo.Function, a []sv) []sv {
			c := f.Convert(a[0], d)
			return []sv{c, f.Convert(c, dtypes.Float32)}
		})
	}
	return b
}
