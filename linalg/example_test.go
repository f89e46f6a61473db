package linalg_test

import (
	"fmt"
	"regexp"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/linalg"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// jnp.linalg.solve of a batch of systems: an LU factorization, then two triangular solves, the
// LAPACK kernels JAX's CPU programs call.
func ExampleSolve() {
	m := stablehlo.NewModule("f")
	f := m.Main()
	a := f.Arg(stablehlo.NewShape(dtypes.Float64, 8, 3, 3))
	b := f.Arg(stablehlo.NewShape(dtypes.Float64, 8, 3, 2))
	x := linalg.Solve(f, a, b)
	f.Return(x)
	text, err := m.Build()
	fmt.Println(x.Shape(), err)
	for _, target := range regexp.MustCompile(`custom_call @(\w+)`).FindAllStringSubmatch(text, -1) {
		fmt.Println(target[1])
	}
	// Output:
	// tensor<8x3x2xf64> <nil>
	// lapack_dgetrf_ffi
	// lapack_dtrsm_ffi
	// lapack_dtrsm_ffi
}
