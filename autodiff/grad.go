package autodiff

import (
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Grad adds to f the gradient of the scalar loss with respect to each value of wrt (JAX's
// jax.grad, built into the same function) and returns the gradients, each of its value's
// type. loss must be a real floating-point scalar, float8 and float4 included (ErrCotangent
// for another shape, ErrNotFloat for another type: jax.grad refuses a complex loss too, and
// Grad has no holomorphic mode; VJP takes complex outputs), and each value of wrt floating
// point or complex (ErrNotFloat, as jax.grad raises for integer inputs; VJP gives integer
// values zeros instead). The gradient with respect to a complex z = x+iy is JAX's,
// dloss/dx - i dloss/dy: the conjugate of the direction of steepest ascent (the gradient
// of |z|^2 is 2 conj(z)). f must not have returned yet. On error (recorded in the module,
// as every builder error) it returns one zero Value per value of wrt.
func Grad(f *stablehlo.Function, loss Value, wrt ...Value) []Value {
	_, g := ValueAndGrad(f, loss, wrt...)
	return g
}

// ValueAndGrad is Grad that also returns loss, for code that reads like JAX's
// jax.value_and_grad: loss, grads := autodiff.ValueAndGrad(f, lossOf(f, params), params...).
func ValueAndGrad(f *stablehlo.Function, loss Value, wrt ...Value) (Value, []Value) {
	const opName = "grad"
	zeros := make([]Value, len(wrt))
	if f == nil || f.Failed() {
		return loss, zeros
	}
	if !loss.Valid() || loss.Function() != f || loss.IsWeak() {
		f.Failf(opName, -1, loss, ErrCotangent, "the loss is not a value of this function")
		return loss, zeros
	}
	if loss.Shape().Rank() != 0 {
		f.Failf(opName, -1, loss, ErrCotangent, "gradient only defined for scalar-output functions; the loss is %v", loss.Shape())
		return loss, zeros
	}
	if d := loss.DType(); !shapes.IsFloat(d) {
		hint := ""
		if shapes.IsComplex(d) {
			hint = "; for complex outputs use VJP with a cotangent (Grad has no holomorphic mode)"
		}
		f.Failf(opName, -1, loss, ErrNotFloat, "grad requires a real-valued, floating-point loss, got %v%s", loss.Shape(), hint)
		return loss, zeros
	}
	for i, w := range wrt {
		if w.Valid() && !shapes.IsInexact(w.DType()) {
			f.Failf(opName, i, w, ErrNotFloat, "grad requires real- or complex-valued inputs, but value %d is %v; use VJP for integer values", i, w.Shape())
			return loss, zeros
		}
	}
	one := f.Full(loss.Shape(), 1)
	return loss, VJP(f, []Value{loss}, wrt, []Value{one})
}

// stopKey is the module context key of the set of StopGradient results.
type stopKey struct{}

// StopGradient returns x unchanged as far as the computed values go, but as a value through
// which no cotangent flows (JAX's lax.stop_gradient): VJP, Grad and ValueAndGrad treat it as
// a constant. It is a reshape of x to its own shape (which XLA removes), marked in the
// module. A weak constant or the zero Value is returned as it is.
func StopGradient(x Value) Value {
	f := x.Function()
	if f == nil || x.IsWeak() {
		return x
	}
	r := f.Reshape(x, x.Shape().Dims()...)
	if !r.Valid() {
		return r
	}
	m := f.Module()
	set, _ := m.Context(stopKey{}).(map[Value]bool)
	if set == nil {
		set = make(map[Value]bool)
		m.SetContext(stopKey{}, set)
	}
	set[r] = true
	return r
}

// IsStopped reports whether v is a result of StopGradient.
func IsStopped(v Value) bool {
	f := v.Function()
	if f == nil {
		return false
	}
	return stopped(f)[v]
}

// stopped returns the module's set of StopGradient results (nil if none).
func stopped(f *stablehlo.Function) map[Value]bool {
	set, _ := f.Module().Context(stopKey{}).(map[Value]bool)
	return set
}
