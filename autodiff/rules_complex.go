package autodiff

import (
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Rules of the ops between real and complex values, and of the FFT. As everywhere in this
// package, a cotangent is JAX's: the plain transpose of the linear map, without conjugation
// (the cotangent of x in x*y is ct*y), so that a complex value and its cotangent pair as
// real(sum(x*ct)). The builder's Conj is made of real, imag, negate and complex, whose rules
// compose to JAX's transpose of lax.conj, the conjugate of the cotangent.

func init() {
	for name, r := range map[string]Rule{
		"stablehlo.real":    realRule,
		"stablehlo.imag":    imagRule,
		"stablehlo.complex": complexRule,
		"stablehlo.fft":     fftRule,
	} {
		Register(name, r)
	}
}

// realRule: the cotangent of x in real(x) is complex(ct, 0).
func realRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	g := cts[0]
	return []Value{b.f.Complex(g, b.Zeros(g.Shape()))}
}

// imagRule: the cotangent of x in imag(x) is complex(0, -ct).
func imagRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.f
	g := cts[0]
	return []Value{f.Complex(b.Zeros(g.Shape()), f.Neg(g))}
}

// complexRule: the cotangents of re and im in complex(re, im) are real(ct) and
// imag(-ct).
func complexRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	f := b.f
	re, im := op.Operands()[0], op.Operands()[1]
	g := cts[0]
	out := make([]Value, 2)
	if b.Active(re) {
		out[0] = f.Real(g)
	}
	if b.Active(im) {
		out[1] = f.Imag(f.Neg(g))
	}
	return out
}

// fftRule is JAX's _fft_transpose_rule (jax/_src/lax/fft.py). The DFT matrix is symmetric,
// so an FFT or IFFT transposes to itself. An RFFT transposes to N times the IRFFT of the
// conjugated cotangent, divided by a mask that counts the bins the half spectrum stands for
// twice; an IRFFT to the conjugate of the RFFT of the cotangent, times that mask over N (N
// the product of the lengths, the mask 1 for the DC bin and for the Nyquist bin of an even
// length, 2 elsewhere).
func fftRule(b *Backward, op *stablehlo.Op, cts []Value) []Value {
	p, ok := params[stablehlo.FFTParams](b, op)
	if !ok {
		return nil
	}
	f := b.f
	g := cts[0]
	n := 1
	for _, l := range p.Length {
		n *= l
	}
	switch p.Type {
	case stablehlo.FFT, stablehlo.IFFT:
		return []Value{f.FFT(g, p.Type, p.Length...)}
	case stablehlo.RFFT:
		x := f.FFT(f.Div(f.Conj(g), fftMask(f, g, p.Length, 1)), stablehlo.IRFFT, p.Length...)
		return []Value{f.Mul(f.Full(x.Shape(), float64(n)), x)}
	case stablehlo.IRFFT:
		x := f.FFT(g, stablehlo.RFFT, p.Length...)
		return []Value{f.Conj(f.Mul(fftMask(f, x, p.Length, 1/float64(n)), x))}
	}
	return b.Fail(op, "FFT type %v has no transpose rule", p.Type)
}

// fftMask returns, of the type and shape of the half spectrum like, the mask of the real
// transforms' rules times scale: along the last dimension, scale at the DC bin and (for an
// even last length) at the Nyquist bin, 2*scale elsewhere.
func fftMask(f *stablehlo.Function, like Value, length []int, scale float64) Value {
	s := like.Shape()
	m := s.Dim(s.Rank() - 1)
	mask := make([]complex128, m)
	for i := range mask {
		mask[i] = complex(2*scale, 0)
	}
	mask[0] = complex(scale, 0)
	if length[len(length)-1]%2 == 0 {
		mask[m-1] = complex(scale, 0)
	}
	return f.BroadcastInDim(f.ArrayOf(s.DType(), mask, m), s.Dims(), []int{s.Rank() - 1})
}
