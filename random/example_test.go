package random_test

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/random"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// Convolution weights drawn exactly as jax.random.normal(jax.random.PRNGKey(0), (3, 3, 3,
// 16)) draws them, and a second key split from the first for the next layer.
func ExampleNormal() {
	m := stablehlo.NewModule("init")
	f := m.Main()
	key := random.Key(f, f.ConstantOf(dtypes.Int32, 0))
	w := random.Normal(f, key, dtypes.Float32, 3, 3, 3, 16)
	keys := random.Split(f, key, 2)
	f.Return(w, keys)
	_, err := m.Build()
	fmt.Println(key.Shape(), w.Shape(), keys.Shape(), err)
	// Output: tensor<2xui32> tensor<3x3x3x16xf32> tensor<2x2xui32> <nil>
}
