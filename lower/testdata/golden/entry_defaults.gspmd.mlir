module @jit_entry_defaults attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x4xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}, %arg1: tensor<4xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<8x4xf32>, tensor<4xf32>) {
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
