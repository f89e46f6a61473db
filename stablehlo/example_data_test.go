package stablehlo_test

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// An embedding lookup and its gradient's scatter: x[idx] and x.at[idx].add(u), with JAX's
// index rules (negative indices wrap; gathers clamp, scatters drop).
func ExampleFunction_Take() {
	m := stablehlo.NewModule("embed")
	f := m.Main()
	table := f.Arg(stablehlo.NewShape(dtypes.Float32, 1000, 64))
	ids := f.Arg(stablehlo.NewShape(dtypes.Int32, 8, 16))
	rows := f.Take(table, ids, 0)
	grads := f.ScatterAdd(f.Full(table.Shape(), float32(0)), ids, rows)
	fmt.Println(rows.Shape(), grads.Shape())
	for _, op := range f.Ops() {
		if p, ok := op.Params().(stablehlo.GatherParams); ok {
			fmt.Println(op.Name(), "slice sizes", p.SliceSizes, "offset dims", p.Dims.OffsetDims)
		}
	}
	// Output:
	// tensor<8x16x64xf32> tensor<1000x64xf32>
	// stablehlo.gather slice sizes [1 64] offset dims [2]
}

// A convolution with SAME padding and stride 2, then a max pool (package random draws the
// weights as jax.random.normal does: see random.Normal).
func ExampleFunction_Conv() {
	m := stablehlo.NewModule("convnet")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 8, 32, 32, 3))
	w := f.Arg(stablehlo.NewShape(dtypes.Float32, 3, 3, 3, 16))
	nhwc, err := stablehlo.ConvLayout("NHWC", "HWIO", "NHWC")
	if err != nil {
		fmt.Println(err)
		return
	}
	y := f.Conv(x, w, stablehlo.ConvParams{Dims: nhwc, Strides: []int{2, 2}, Padding: stablehlo.PadSame})
	p := f.MaxPool(y, []int{2, 2}, []int{2, 2}, stablehlo.PadValid)
	f.Return(p)
	if _, err := m.Build(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(y.Shape(), p.Shape())
	// Output:
	// tensor<8x16x16x16xf32> tensor<8x8x8x16xf32>
}
