package lower_test

import (
	"errors"
	"fmt"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

// The seed program of JAX's Shardy announcement: f(x) = x * 2 on an 8x2 array sharded
// P("x", "y") over a 4x2 mesh.
func Example() {
	m8 := mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	s := mesh.MustNamedSharding(m8, mesh.P("x", "y"))

	m := lower.NewModule("jit_f")
	f := m.Main()
	x := f.ShardedArg(lower.NewShape(dtypes.Int64, 8, 2), s)
	f.Return(f.Mul(x, f.Constant(2)))
	f.ShardResults(s)
	prog, err := m.Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(prog.Text())
	// Output:
	// module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
	//   sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
	//   func.func public @main(%arg0: tensor<8x2xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x2xi64> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
	//     %0 = stablehlo.constant dense<2> : tensor<8x2xi64>
	//     %1 = "stablehlo.multiply"(%arg0, %0) : (tensor<8x2xi64>, tensor<8x2xi64>) -> tensor<8x2xi64>
	//     return %1 : tensor<8x2xi64>
	//   }
	// }
}

// A shard_map that sums each shard and all-reduces the partial sums, lowered for GSPMD.
func ExampleFunction_ShardMap() {
	abs := mesh.MustAbstract([]int{4}, []string{"d"})
	s, _ := mesh.NewAbstractSharding(abs, mesh.P("d"))

	m := lower.NewModule("psum", lower.WithPartitioner(lower.GSPMD))
	f := m.Main()
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8), s)
	total := f.ShardMap(abs, []mesh.PartitionSpec{mesh.P("d")}, []mesh.PartitionSpec{mesh.P()}, nil,
		func(g *lower.Function, args []lower.Value) []lower.Value {
			return []lower.Value{g.Psum(g.Sum(args[0]), "d")}
		}, x)
	f.Return(total...)
	prog, _ := m.Build()
	fmt.Print(prog.Text())
	// Output:
	// module @psum attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
	//   func.func public @main(%arg0: tensor<8xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}) -> (tensor<f32>) {
	//     %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4]<=[4]}"} : (tensor<8xf32>) -> tensor<8xf32>
	//     %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<8xf32>) -> tensor<2xf32>
	//     %2 = func.call @shmap_body(%1) : (tensor<2xf32>) -> tensor<f32>
	//     %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<f32>) -> tensor<f32>
	//     %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{replicated}"} : (tensor<f32>) -> tensor<f32>
	//     return %4 : tensor<f32>
	//   }
	//   func.func private @shmap_body(%arg0: tensor<2xf32>) -> (tensor<f32>) {
	//     %0 = stablehlo.constant dense<0.0> : tensor<f32>
	//     %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0>}> ({
	//     ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
	//       %2 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
	//       "stablehlo.return"(%2) : (tensor<f32>) -> ()
	//     }) : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
	//     %3 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
	//     ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
	//       %4 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
	//       "stablehlo.return"(%4) : (tensor<f32>) -> ()
	//     }) : (tensor<f32>) -> tensor<f32>
	//     return %3 : tensor<f32>
	//   }
	// }
}

// A constraint in the middle of a program: JAX's with_sharding_constraint.
func ExampleFunction_ShardingConstraint() {
	m8 := mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y")
	m := lower.NewModule("")
	f := m.Main()
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 4), mesh.MustNamedSharding(m8, mesh.P("x")))
	y := f.ShardingConstraint(f.Exp(x), mesh.MustNamedSharding(m8, mesh.P(nil, "y")))
	f.Return(y)
	f.ShardResults(mesh.MustNamedSharding(m8, mesh.P(nil, "y")))
	prog, _ := m.Build()
	fmt.Print(prog.Text())
	// Output:
	// module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
	//   sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
	//   func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>}) {
	//     %0 = "stablehlo.exponential"(%arg0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
	//     %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<8x4xf32>
	//     return %1 : tensor<8x4xf32>
	//   }
	// }
}

// Errors stick: the first one is reported by Build, naming the op and the operand.
func ExampleModule_Build_error() {
	m := lower.NewModule("bad")
	f := m.Main()
	x := f.Arg(lower.NewShape(dtypes.Float32, 4, 2))
	y := f.Arg(lower.NewShape(dtypes.Float32, 2, 4))
	z := f.Add(x, y)   // shape error, recorded
	f.Return(f.Exp(z)) // no-op
	_, err := m.Build()
	fmt.Println(err)
	fmt.Println(errors.Is(err, lower.ErrShape))
	// Output:
	// lower: @main: add: operand 1 (%arg1): shape mismatch: add got incompatible shapes for broadcasting: (4, 2), (2, 4).
	// true
}

// shard_map checks replication as JAX does: returning a block that varies over "x" with
// out_specs P() is an error; ShardMapUnchecked (check_vma=False) would build it.
func ExampleFunction_ShardMap_replication() {
	abs := mesh.MustAbstract([]int{4, 2}, []string{"x", "y"})
	m := lower.NewModule("f")
	f := m.Main()
	x := f.Arg(lower.NewShape(dtypes.Float32, 8, 4))
	f.Return(f.ShardMap(abs, []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P()}, nil,
		func(g *lower.Function, a []lower.Value) []lower.Value { return a }, x)...)
	_, err := m.Build()
	fmt.Println(errors.Is(err, lower.ErrReplication))
	fmt.Println(err)
	// Output:
	// true
	// lower: @main: sdy.manual_computation: out_specs imply replication the value does not have: result 0: out_specs P() implies the value is replicated over mesh axis "x", but it varies over "x" (name the axis in the out_spec, reduce over it with Psum/AllReduceOver, or build with ShardMapUnchecked, JAX's check_vma=False)
}
