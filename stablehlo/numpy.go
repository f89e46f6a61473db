package stablehlo

import (
	"fmt"
	"slices"
)

// NumPy's broadcasting, built from stablehlo.broadcast_in_dim, so a pass over Function.Ops
// sees only that op. (Reductions that keep their dimensions, Mean and Variance are package
// jnp's.)
//
// Binary and ternary elementwise ops (Add, Mul, Compare, Select, Clamp, ...) broadcast
// their operands with NumPy's rule themselves, emitting stablehlo.broadcast_in_dim for each
// operand whose shape differs from the result's; Broadcast2 and BroadcastArrays apply the
// same rule on their own:
//
//	z := f.Add(x, y) // f32[4, 1, 3] + f32[5, 1] -> f32[4, 5, 3]

// BroadcastShapes returns the shape that arrays of the given dimensions broadcast to under
// NumPy's rule: dimensions align at the end, and each pair is equal or one of them is 1.
// Incompatible dimensions give an error wrapping ErrShape that names them.
func BroadcastShapes(shapes ...[]int) ([]int, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := slices.Repeat([]int{1}, rank)
	for i := range rank {
		for _, s := range shapes {
			j := len(s) - rank + i
			if j < 0 {
				continue
			}
			switch d := s[j]; {
			case d == out[i] || d == 1:
			case out[i] == 1:
				out[i] = d
			default:
				return nil, fmt.Errorf("%w: shapes %v cannot be broadcast together: dimension %d (from the end) is %d in one and %d in another",
					ErrShape, shapes, i-rank, out[i], d)
			}
		}
	}
	return out, nil
}

// Broadcast2 broadcasts x and y to their common shape under NumPy's rule (see
// BroadcastShapes) and returns them, so that a binary op of different shapes reads
// f.Mul(f.Broadcast2(x, y)). Only shapes change: element types must still agree when the
// op uses them. A weak constant (see Constant) is returned unchanged, since binary ops
// broadcast it themselves. After an error both results are the zero Value.
func (f *Function) Broadcast2(x, y Value) (Value, Value) {
	out := f.BroadcastArrays(x, y)
	if len(out) != 2 {
		return Value{}, Value{}
	}
	return out[0], out[1]
}

// BroadcastArrays broadcasts every value to their common shape under NumPy's rule, like
// jnp.broadcast_arrays; weak constants are returned unchanged. After an error it returns
// one zero Value per argument.
func (f *Function) BroadcastArrays(xs ...Value) []Value {
	const opName = "broadcast_in_dim"
	zeros := make([]Value, len(xs))
	vs, ok := f.check(opName, xs...)
	if !ok {
		return zeros
	}
	var shapes [][]int
	for _, v := range vs {
		if v.weak == nil {
			shapes = append(shapes, v.shape.Dims())
		}
	}
	target, err := BroadcastShapes(shapes...)
	if err != nil {
		f.fail(opName, -1, nil, err)
		return zeros
	}
	out := make([]Value, len(vs))
	for i, v := range vs {
		if v.weak != nil || slices.Equal(v.shape.Dims(), target) {
			out[i] = Value{v}
			continue
		}
		out[i] = f.BroadcastTo(Value{v}, target...)
	}
	if f.failed() {
		return zeros
	}
	return out
}
