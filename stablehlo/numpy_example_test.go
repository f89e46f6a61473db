package stablehlo_test

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// NumPy broadcasting is explicit: Broadcast2's two results feed a binary op directly.
func ExampleFunction_Broadcast2() {
	m := stablehlo.NewModule("f")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4, 1, 3))
	y := f.Arg(stablehlo.NewShape(dtypes.Float32, 5, 1))
	z := f.Add(f.Broadcast2(x, y))
	f.Return(z)
	_, err := m.Build()
	fmt.Println(z.Shape(), err)
	// Output: tensor<4x5x3xf32> <nil>
}

// Attention scores with Einsum, and the typed error of a malformed spec.
func ExampleFunction_Einsum() {
	m := stablehlo.NewModule("f")
	f := m.Main()
	q := f.Arg(stablehlo.NewShape(dtypes.Float32, 2, 8, 4, 16)) // batch, query, head, depth
	k := f.Arg(stablehlo.NewShape(dtypes.Float32, 2, 6, 4, 16)) // batch, key, head, depth
	scores := f.Einsum("bqhd,bkhd->bhqk", q, k)
	fmt.Println(scores.Shape())

	f.Einsum("bqhd,bkhd->bhqx", q, k)
	f.Return(scores)
	_, err := m.Build()
	fmt.Println(err)
	// Output:
	// tensor<2x4x8x6xf32>
	// stablehlo: @main: einsum: spec "bqhd,bkhd->bhqx": invalid einsum spec: output label 'x' does not appear in the inputs
}

// Binary ops broadcast with NumPy's rule: a bias add needs no BroadcastInDim. Shapes that
// do not broadcast give JAX's message.
func ExampleFunction_Add_broadcast() {
	m := stablehlo.NewModule("f")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 2, 3, 4))
	b := f.Arg(stablehlo.NewShape(dtypes.Float32, 4))
	c := f.Arg(stablehlo.NewShape(dtypes.Float32, 3))
	y := f.Add(x, b)
	fmt.Println(y.Shape())

	f.Mul(y, c)
	f.Return(y)
	_, err := m.Build()
	fmt.Println(err)
	// Output:
	// tensor<2x3x4xf32>
	// stablehlo: @main: multiply: operand 1 (%arg2): shape mismatch: Incompatible shapes for broadcasting: shapes=[(2, 3, 4), (3,)]
}
