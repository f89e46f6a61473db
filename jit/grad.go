package jit

import (
	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/lower"
)

// Loss builds a scalar loss from a function's arguments, for ValueAndGrad.
type Loss func(f *lower.Function, args []lower.Value) lower.Value

// ValueAndGrad returns a Body computing loss and its gradient with respect to the arguments
// at positions wrt, like jax.value_and_grad(loss, argnums=wrt) under jax.jit: its results are
// the loss, then one gradient per position, each with its argument's type. Give the gradients
// OutSpecs equal to their parameters' InSpecs to get them back with the parameters'
// shardings. A position out of range, or a non-float argument, is an error of the lowering
// (wrapping autodiff.ErrCotangent or autodiff.ErrNotFloat).
//
// A training step applies the gradients in the same Body instead: see autodiff.ValueAndGrad
// and the examples.
func ValueAndGrad(loss Loss, wrt ...int) Body {
	return func(f *lower.Function, args []lower.Value) []lower.Value {
		l := loss(f, args)
		ws := make([]lower.Value, len(wrt))
		for i, k := range wrt {
			if k < 0 || k >= len(args) {
				f.Failf("grad", -1, lower.Value{}, autodiff.ErrCotangent, "argument %d to differentiate is out of range for %d arguments", k, len(args))
				return []lower.Value{l}
			}
			ws[i] = args[k]
		}
		l, g := autodiff.ValueAndGrad(f.Function, l, ws...)
		return append([]lower.Value{l}, g...)
	}
}
