module @jit_entry_defaults attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, %arg1: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {?}]>}, tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}]>}) {
    %0 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<8x4xf32>
    %1 = "stablehlo.add"(%arg0, %0) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    %2 = stablehlo.constant dense<0.0> : tensor<f32>
    %3 = "stablehlo.reduce"(%1, %2) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %4 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%4) : (tensor<f32>) -> ()
    }) : (tensor<8x4xf32>, tensor<f32>) -> tensor<4xf32>
    return %1, %3 : tensor<8x4xf32>, tensor<4xf32>
  }
}
