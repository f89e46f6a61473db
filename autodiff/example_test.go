package autodiff_test

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// The gradient of sum(tanh(x @ w)) with respect to w, built into the same function: the
// backward ops follow the forward ones. As in JAX, the cotangent of the right-hand
// side of a matmul is a dot_general and a transpose, which XLA folds into one.
func ExampleGrad() {
	m := stablehlo.NewModule("grad")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 8, 4))
	w := f.Arg(stablehlo.NewShape(dtypes.Float32, 4, 2))
	loss := f.Sum(f.Tanh(f.MatMul(x, w)))
	forward := len(f.Ops())
	g := autodiff.Grad(f, loss, w)
	f.Return(loss, g[0])
	if _, err := m.Build(); err != nil {
		fmt.Println(err)
		return
	}
	for _, op := range f.Ops()[forward:] {
		fmt.Println(op.Name())
	}
	fmt.Println(g[0].Shape())
	// Output:
	// stablehlo.constant
	// stablehlo.broadcast_in_dim
	// stablehlo.multiply
	// stablehlo.add
	// stablehlo.constant
	// stablehlo.subtract
	// stablehlo.multiply
	// stablehlo.dot_general
	// stablehlo.transpose
	// tensor<4x2xf32>
}
