package stablehlo

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/shapes"
)

// complexOf returns the complex type whose parts are of real type d (complex64 for f32,
// complex128 for f64), or InvalidDType.
func complexOf(d DType) DType {
	switch d {
	case dtypes.Float32:
		return dtypes.Complex64
	case dtypes.Float64:
		return dtypes.Complex128
	}
	return dtypes.InvalidDType
}

// Real returns the real part of complex x elementwise (stablehlo.real), f32 for complex64 and
// f64 for complex128; of a real float x it returns x itself, as jnp.real does.
func (f *Function) Real(x Value) Value { return f.part("real", x) }

// Imag returns the imaginary part of complex x elementwise (stablehlo.imag); of a real float x
// it returns zeros, as jnp.imag does.
func (f *Function) Imag(x Value) Value { return f.part("imag", x) }

func (f *Function) part(opName string, x Value) Value {
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	d := a.shape.DType()
	switch {
	case shapes.IsComplex(d):
		return f.emit("stablehlo."+opName, []*value{a}, a.shape.WithDType(realOf(d)), nil)
	case shapes.IsFloat(d) && opName == "real":
		return Value{a}
	case shapes.IsFloat(d):
		return f.Full(a.shape, 0)
	}
	f.failf(opName, 0, a, ErrDType, "%s needs a complex or float operand, got %s", opName, dtypeName(d))
	return Value{}
}

// Complex returns re + i*im elementwise (stablehlo.complex): f32 parts make complex64, f64
// parts complex128. As in every binary op, the operands broadcast with NumPy's rule and a
// weak constant takes the other's type.
func (f *Function) Complex(re, im Value) Value {
	const opName = "complex"
	a, b, ok := f.pair(opName, "complex", re, im)
	if !ok {
		return Value{}
	}
	c := complexOf(a.shape.DType())
	if c == dtypes.InvalidDType {
		f.failf(opName, 0, a, ErrDType, "complex needs f32 or f64 parts, got %s", dtypeName(a.shape.DType()))
		return Value{}
	}
	return f.emit("stablehlo.complex", []*value{a, b}, a.shape.WithDType(c), nil)
}

// Conj returns the complex conjugate of x elementwise, as JAX lowers lax.conj:
// complex(real(x), -imag(x)). Of a real float x it returns x.
func (f *Function) Conj(x Value) Value {
	const opName = "conj"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	switch d := a.shape.DType(); {
	case shapes.IsFloat(d):
		return Value{a}
	case !shapes.IsComplex(d):
		f.failf(opName, 0, a, ErrDType, "conj needs a complex or float operand, got %s", dtypeName(d))
		return Value{}
	}
	return f.Complex(f.Real(Value{a}), f.Neg(f.Imag(Value{a})))
}

// FFTType is the kind of transform of FFT (StableHLO's fft_type).
type FFTType uint8

// Transforms.
const (
	FFT   FFTType = iota + 1 // complex to complex, forward
	IFFT                     // complex to complex, inverse (scaled by 1/n)
	RFFT                     // real to complex, forward: the last dimension n becomes n/2+1
	IRFFT                    // complex to real, inverse: the last dimension becomes the fft_length
)

// String returns "FFT", "IFFT", "RFFT" or "IRFFT".
func (t FFTType) String() string {
	if t >= FFT && t <= IRFFT {
		return [...]string{"", "FFT", "IFFT", "RFFT", "IRFFT"}[t]
	}
	return "FFTType(" + strconv.Itoa(int(t)) + ")"
}

// FFTParams are the parameters of stablehlo.fft.
type FFTParams struct {
	Type   FFTType
	Length []int // the transform's length along each of the last len(Length) dimensions
}

// Properties returns "fft_type = #stablehlo<fft_type FFT>, fft_length = array<i64: ...>".
func (p FFTParams) Properties() string {
	var b strings.Builder
	b.WriteString("fft_type = #stablehlo<fft_type " + p.Type.String() + ">, fft_length = array<i64")
	for i, n := range p.Length {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(n))
	}
	b.WriteString(">")
	return b.String()
}

// FFT returns the fast Fourier transform of x over its last len(length) dimensions
// (stablehlo.fft, Params: FFTParams; jnp.fft's fft, ifft, rfft, irfft and their n-d forms, 1
// to 3 dimensions), as lax.fft defines it: FFT and IFFT map complex to complex of the same
// shape and need length to be those dimensions; RFFT maps f32 (f64) to complex64
// (complex128), needs length to be those dimensions, and its last dimension n becomes
// n/2+1; IRFFT maps complex back to real, its last dimension must be length's last /2+1, and
// becomes length's last.
func (f *Function) FFT(x Value, t FFTType, length ...int) Value {
	const opName = "fft"
	a, ok := f.operand1(opName, x)
	if !ok {
		return Value{}
	}
	d, r, k := a.shape.DType(), a.shape.Rank(), len(length)
	if t < FFT || t > IRFFT {
		f.failf(opName, -1, nil, ErrDType, "invalid FFT type %v", t)
		return Value{}
	}
	if k < 1 || k > 3 || k > r {
		f.failf(opName, 0, a, ErrShape, "an FFT over %d dimensions of %v (1 to 3, at most the rank)", k, a.shape)
		return Value{}
	}
	for i, n := range length {
		if n < 1 {
			f.failf(opName, -1, nil, ErrShape, "fft_length[%d] = %d", i, n)
			return Value{}
		}
	}
	last := a.shape.Dims()[r-k:]
	out := a.shape
	switch t {
	case FFT, IFFT:
		if !shapes.IsComplex(d) {
			f.failf(opName, 0, a, ErrDType, "%v needs a complex operand, got %s", t, dtypeName(d))
			return Value{}
		}
		if !slices.Equal(last, length) {
			f.failf(opName, 0, a, ErrShape, "%v of %v needs fft_length %v, got %v", t, a.shape, last, length)
			return Value{}
		}
	case RFFT:
		c := complexOf(d)
		if c == dtypes.InvalidDType {
			f.failf(opName, 0, a, ErrDType, "RFFT needs an f32 or f64 operand, got %s", dtypeName(d))
			return Value{}
		}
		if !slices.Equal(last, length) {
			f.failf(opName, 0, a, ErrShape, "RFFT of %v needs fft_length %v, got %v", a.shape, last, length)
			return Value{}
		}
		dims := a.shape.Dims()
		dims[r-1] = length[k-1]/2 + 1
		out = shapes.Make(c, dims...)
	case IRFFT:
		if !shapes.IsComplex(d) {
			f.failf(opName, 0, a, ErrDType, "IRFFT needs a complex operand, got %s", dtypeName(d))
			return Value{}
		}
		want := slices.Clone(length)
		want[k-1] = length[k-1]/2 + 1
		if !slices.Equal(last, want) {
			f.failf(opName, 0, a, ErrShape, "IRFFT of %v with fft_length %v needs its last dimensions to be %v", a.shape, length, want)
			return Value{}
		}
		dims := a.shape.Dims()
		dims[r-1] = length[k-1]
		out = shapes.Make(realOf(d), dims...)
	}
	return f.emit("stablehlo.fft", []*value{a}, out, FFTParams{Type: t, Length: slices.Clone(length)})
}
