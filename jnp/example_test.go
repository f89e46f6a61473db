package jnp_test

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/jnp"
	"github.com/xlamesh/xlamesh/nn"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// A causal mask from Tril, and a one-hot encoding of an Arange.
func ExampleTril() {
	m := stablehlo.NewModule("f")
	f := m.Main()
	scores := f.Arg(stablehlo.NewShape(dtypes.Float32, 2, 4, 4))
	causal := jnp.Tril(f, f.Full(stablehlo.NewShape(dtypes.Bool, 4, 4), true), 0)
	masked := jnp.Where(f, causal, scores, f.Constant(-1e9))
	hot := nn.OneHot(f, jnp.Arange(f, 0, 3, 1, dtypes.Int32), 4, dtypes.Float32)
	f.Return(masked, hot)
	_, err := m.Build()
	fmt.Println(masked.Shape(), hot.Shape(), err)
	// Output: tensor<2x4x4xf32> tensor<3x4xf32> <nil>
}

// A sum that keeps its reduced dimension, of two arrays broadcast with NumPy's rule.
func ExampleSumKeepDims() {
	m := stablehlo.NewModule("f")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4, 1, 3))
	y := f.Arg(stablehlo.NewShape(dtypes.Float32, 5, 1))
	z := f.Add(f.Broadcast2(x, y))
	f.Return(jnp.SumKeepDims(f, z, -1))
	_, err := m.Build()
	fmt.Println(z.Shape(), f.Results()[0].Shape(), err)
	// Output: tensor<4x5x3xf32> tensor<4x5x1xf32> <nil>
}
