package nn_test

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/nn"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Attention weights: a softmax over the keys of the scores Einsum computes.
func ExampleSoftmax() {
	m := stablehlo.NewModule("f")
	f := m.Main()
	q := f.Arg(stablehlo.NewShape(dtypes.Float32, 2, 8, 4, 16)) // batch, query, head, depth
	k := f.Arg(stablehlo.NewShape(dtypes.Float32, 2, 6, 4, 16)) // batch, key, head, depth
	w := nn.Softmax(f, f.Einsum("bqhd,bkhd->bhqk", q, k))
	f.Return(w)
	_, err := m.Build()
	fmt.Println(w.Shape(), err)
	// Output: tensor<2x4x8x6xf32> <nil>
}

// A pre-norm MLP block as flax writes it: LayerNorm with a scale and a bias, then a GELU
// layer.
func ExampleLayerNorm() {
	m := stablehlo.NewModule("f")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.BFloat16, 8, 16))
	scale, bias := f.Arg(stablehlo.NewShape(dtypes.Float32, 16)), f.Arg(stablehlo.NewShape(dtypes.Float32, 16))
	w := f.Arg(stablehlo.NewShape(dtypes.Float32, 16, 32))
	h := nn.LayerNorm(f, x, nn.LayerNormOptions{Scale: scale, Bias: bias})
	y := nn.Gelu(f, f.MatMul(h, w), true)
	f.Return(y)
	_, err := m.Build()
	fmt.Println(h.Shape(), y.Shape(), err)
	// Output: tensor<8x16xf32> tensor<8x32xf32> <nil>
}
