package optim

import (
	"github.com/xlamesh/xlamesh/stablehlo"
	"github.com/xlamesh/xlamesh/tree"
)

// The tree forms: parameters, gradients and updates as trees of Values (package tree), as
// optax takes pytrees. The leaves go to the flat forms in tree order, so the State is the one
// the flat forms build for the flattened parameters; a jitted step (jit.NewTree) takes and
// returns it as a []lower.Value, a tree of its own, laid out by StateSpecs. A value that is
// no tree of Values, or gradients of another structure than the parameters, records an error
// wrapping tree's (ErrNotTree, ErrStructure, naming the path) in f; the functions then return
// zero trees and nil states.

// InitTree is Init for parameters in a tree.
func InitTree[P any](f *stablehlo.Function, t Transformation, params P) State {
	p, _, ok := leaves(f, "optim.init", params)
	if !ok {
		return nil
	}
	return t.Init(f, p)
}

// UpdateTree is Update for gradients and parameters in trees of one structure: the updates
// come back as a tree of P.
func UpdateTree[P any](f *stablehlo.Function, t Transformation, grads P, state State, params P) (P, State) {
	const op = "optim.update"
	var zero P
	g, d, ok := leaves(f, op, grads)
	p, pd, ok2 := leaves(f, op, params)
	if !ok || !ok2 || !sameStructure(f, op, "gradients", d, pd) {
		return zero, nil
	}
	u, next := t.Update(f, g, state, p)
	if f.Failed() {
		return zero, nil
	}
	return build[P](f, op, d, u), next
}

// ApplyUpdatesTree is ApplyUpdates for parameters and updates in trees of one structure.
func ApplyUpdatesTree[P any](f *stablehlo.Function, params, updates P) P {
	const op = "optim.apply_updates"
	var zero P
	p, d, ok := leaves(f, op, params)
	u, ud, ok2 := leaves(f, op, updates)
	if !ok || !ok2 || !sameStructure(f, op, "updates", ud, d) {
		return zero
	}
	next := ApplyUpdates(f, p, u)
	if f.Failed() {
		return zero
	}
	return build[P](f, op, d, next)
}

// StepTree is one optimizer step on a tree of parameters, UpdateTree then ApplyUpdatesTree:
// it returns the new parameters and the new state.
func StepTree[P any](f *stablehlo.Function, t Transformation, grads P, state State, params P) (P, State) {
	updates, next := UpdateTree(f, t, grads, state, params)
	if f.Failed() {
		var zero P
		return zero, nil
	}
	return ApplyUpdatesTree(f, params, updates), next
}

func leaves(f *stablehlo.Function, op string, v any) ([]Value, tree.Def, bool) {
	if f.Failed() {
		return nil, tree.Def{}, false
	}
	vs, d, err := tree.Flatten[Value](v)
	if err != nil {
		f.Fail(op, -1, Value{}, err)
		return nil, tree.Def{}, false
	}
	return vs, d, true
}

// sameStructure records an ErrStructure error unless got (what, e.g. "gradients") has the
// parameters' structure.
func sameStructure(f *stablehlo.Function, op, what string, got, params tree.Def) bool {
	if got.Equal(params) {
		return true
	}
	f.Fail(op, -1, Value{}, &tree.PathError{Reason: "the " + what + " are " + got.String() + ", the parameters " + params.String(), Err: tree.ErrStructure})
	return false
}

func build[P any](f *stablehlo.Function, op string, d tree.Def, vs []Value) P {
	out, err := tree.Build[P](d, vs)
	if err != nil {
		f.Fail(op, -1, Value{}, err)
	}
	return out
}
