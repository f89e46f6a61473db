package autodiff

import (
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Rules of the ops between real and complex values. As everywhere in this
// package, a cotangent is JAX's: the plain transpose of the linear map, without conjugation
// (the cotangent of x in x*y is ct*y), so that a complex value and its cotangent pair as
// real(sum(x*ct)). The builder's Conj is made of real, imag, negate and complex, whose rules
// compose to JAX's transpose of lax.conj, the conjugate of the cotangent.

func init() {
	for name, r := range map[string]Rule{
		"stablehlo.real":    realRule,
		"stablehlo.imag":    imagRule,
		"stablehlo.complex": complexRule,
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
