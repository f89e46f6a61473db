package stablehlo_test

import (
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// f(x) = sum(x * 2) over the rows of an 8x2 array.
func Example() {
	m := stablehlo.NewModule("f")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 8, 2))
	f.Return(f.Sum(f.Mul(x, f.Constant(2.0)), 0))
	text, err := m.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(text)
	// Output:
	// module @f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
	//   func.func public @main(%arg0: tensor<8x2xf32>) -> (tensor<2xf32>) {
	//     %0 = stablehlo.constant dense<2.0> : tensor<8x2xf32>
	//     %1 = "stablehlo.multiply"(%arg0, %0) : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
	//     %2 = stablehlo.constant dense<0.0> : tensor<f32>
	//     %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 0>}> ({
	//     ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
	//       %4 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
	//       "stablehlo.return"(%4) : (tensor<f32>) -> ()
	//     }) : (tensor<8x2xf32>, tensor<f32>) -> tensor<2xf32>
	//     return %3 : tensor<2xf32>
	//   }
	// }
}

// A pass over a built function reads each op's kind, operands and typed parameters.
func ExampleFunction_Ops() {
	m := stablehlo.NewModule("f")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4, 3))
	y := f.Transpose(f.Exp(x), 1, 0)
	f.Return(f.Slice(y, []int{0, 1}, []int{3, 3}, nil))
	for _, op := range f.Ops() {
		switch p := op.Params().(type) {
		case stablehlo.TransposeParams:
			fmt.Println(op.Name(), "perm", p.Perm)
		case stablehlo.SliceParams:
			fmt.Println(op.Name(), "start", p.Start, "limit", p.Limit)
		case nil:
			fmt.Println(op.Name(), op.Operands(), "->", op.Results()[0].Shape())
		}
	}
	// Output:
	// stablehlo.exponential [%arg0] -> tensor<4x3xf32>
	// stablehlo.transpose perm [1 0]
	// stablehlo.slice start [0 1] limit [3 3]
}

// Collectives take explicit replica groups of partition ids.
func ExampleFunction_AllReduce() {
	m := stablehlo.NewModule("psum")
	m.SetAttr("mhlo.num_partitions", "4 : i32")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 2))
	f.Return(f.AllReduce(x, stablehlo.Sum, [][]int{{0, 1}, {2, 3}}))
	text, _ := m.Build()
	fmt.Print(text)
	// Output:
	// module @psum attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
	//   func.func public @main(%arg0: tensor<2xf32>) -> (tensor<2xf32>) {
	//     %0 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
	//     ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
	//       %1 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
	//       "stablehlo.return"(%1) : (tensor<f32>) -> ()
	//     }) : (tensor<2xf32>) -> tensor<2xf32>
	//     return %0 : tensor<2xf32>
	//   }
	// }
}

// IntList and DenseI64 write attribute text, e.g. for a custom call's Attr values.
func ExampleDenseI64() {
	fmt.Println(stablehlo.IntList([]int{1, 2}))
	fmt.Println(stablehlo.DenseI64([][]int{{0, 1}, {2, 3}}))
	// Output:
	// [1, 2]
	// dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>
}
