package autodiff

import (
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
	"github.com/xlamesh/xlamesh/tree"
)

// GradTree is Grad with respect to a tree of values (package tree), as jax.grad of a function
// of a pytree: wrt is a struct, slice or map of Values (Params[Value]), and the gradients come
// back in a tree of the same type and structure. Errors name the leaf's path (".Blocks[1].Wq"
// is an int32); a wrt that is no tree of Values records an error wrapping tree's in f. On
// error it returns the zero T.
func GradTree[T any](f *stablehlo.Function, loss Value, wrt T) T {
	_, g := ValueAndGradTree(f, loss, wrt)
	return g
}

// ValueAndGradTree is GradTree that also returns loss, as jax.value_and_grad.
func ValueAndGradTree[T any](f *stablehlo.Function, loss Value, wrt T) (Value, T) {
	const opName = "grad"
	var zero T
	if f == nil || f.Failed() {
		return loss, zero
	}
	leaves, d, err := tree.Flatten[Value](wrt)
	if err != nil {
		f.Fail(opName, -1, loss, err)
		return loss, zero
	}
	for i, p := range d.Paths() {
		w := leaves[i]
		if !w.Valid() {
			f.Failf(opName, -1, loss, ErrCotangent, "the value at %s is not set", tree.ShowPath(p))
			return loss, zero
		}
		if !shapes.IsInexact(w.DType()) {
			f.Failf(opName, -1, w, ErrNotFloat, "grad requires real- or complex-valued inputs, but %s is %v", tree.ShowPath(p), w.Shape())
			return loss, zero
		}
	}
	loss, g := ValueAndGrad(f, loss, leaves...)
	if f.Failed() {
		return loss, zero
	}
	out, err := tree.Build[T](d, g)
	if err != nil {
		f.Fail(opName, -1, loss, err)
		return loss, zero
	}
	return loss, out
}
