package autodiff

import (
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// JVP adds to f the forward-mode derivative of the outputs at the values wrt in the
// directions tangents (one per value of wrt, of its type; JAX's jax.jvp, built into the same
// function) and returns one tangent per output. It is computed from VJP, which is linear in
// the outputs' cotangents: JVP transposes that map by walking back the backward pass itself
// (the "double VJP"), so it costs about two backward passes, needs the rules of the ops the
// backward pass is made of (all of this package's have them, a max pool's select_and_scatter
// included), and takes the options of VJP. An integer or pred output gets zeros; the tangent
// of an integer value of wrt is ignored. Complex values get JAX's tangents: of a holomorphic
// function, its complex derivative times the tangent. Errors stick in the module; JVP then
// returns one zero Value per output.
func JVP(f *stablehlo.Function, outputs, wrt, tangents []Value, opts ...Option) []Value {
	const opName = "jvp"
	res := make([]Value, len(outputs))
	if f == nil || f.Failed() {
		return res
	}
	if len(tangents) != len(wrt) {
		f.Failf(opName, -1, Value{}, ErrCotangent, "%d tangents for %d values", len(tangents), len(wrt))
		return res
	}
	for i, w := range wrt {
		if !w.Valid() || !shapes.IsInexact(w.DType()) {
			continue
		}
		t := tangents[i]
		if !t.Valid() || !visible(t, f) || !t.Shape().Equal(w.Shape()) {
			f.Failf(opName, i, t, ErrCotangent, "tangent %d is %v, value %d is %v", i, t.Shape(), i, w.Shape())
			return res
		}
	}
	// Placeholder cotangents u, one per float or complex output: the VJP is linear in them.
	us := make([]Value, len(outputs))
	var uf []Value // the float and complex ones
	var at []int
	for i, o := range outputs {
		if o.Valid() && shapes.IsInexact(o.DType()) {
			us[i] = f.Full(o.Shape(), 0)
			uf = append(uf, us[i])
			at = append(at, i)
		}
	}
	gs := VJP(f, outputs, wrt, us, opts...)
	if f.Failed() {
		return res
	}
	// s = sum_i <g_i, t_i>, linear in u; its gradient in u is J t. The pairing is JAX's,
	// real(sum(g*t)) without conjugation, under which the rules' transposes are transposes
	// (real's is complex(ct, 0), imag's complex(0, -ct)), so complex values need no more.
	var s Value
	for i, g := range gs {
		if !g.Valid() || !shapes.IsInexact(g.DType()) {
			continue
		}
		term := f.Sum(f.Mul(g, tangents[i]))
		if shapes.IsComplex(term.DType()) {
			term = f.Real(term)
		}
		if s.Valid() {
			if term.DType() != s.DType() {
				term = f.Convert(term, s.DType())
			}
			s = f.Add(s, term)
		} else {
			s = term
		}
	}
	for i, o := range outputs {
		if o.Valid() {
			res[i] = f.Full(o.Shape(), 0)
		}
	}
	if !s.Valid() || len(uf) == 0 {
		return res
	}
	ts := VJP(f, []Value{s}, uf, []Value{f.Full(s.Shape(), 1)}, opts...)
	if f.Failed() {
		return make([]Value, len(outputs))
	}
	for k, i := range at {
		res[i] = ts[k]
	}
	return res
}
