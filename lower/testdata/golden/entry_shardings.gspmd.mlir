module @jit_entry_shardings attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg1: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"}, %arg2: tensor<8x8xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}, %arg3: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}, %arg4: tensor<8x8xf32> {mhlo.sharding = "{devices=[8,1]<=[8]}"}, %arg5: tensor<8x8xf32> {mhlo.sharding = "{devices=[1,8]<=[4,2]T(1,0)}"}, %arg6: tensor<f32> {mhlo.sharding = "{replicated}"}) -> (tensor<8x8xf32> {mhlo.sharding = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"}, tensor<f32> {mhlo.sharding = "{replicated}"}) {
    %0 = "stablehlo.add"(%arg0, %arg1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = "stablehlo.add"(%arg2, %arg3) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %2 = "stablehlo.add"(%0, %1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %3 = "stablehlo.add"(%arg4, %arg5) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %4 = "stablehlo.broadcast_in_dim"(%arg6) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<8x8xf32>
    %5 = "stablehlo.add"(%3, %4) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    %6 = "stablehlo.add"(%2, %5) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
    return %6, %arg6 : tensor<8x8xf32>, tensor<f32>
  }
}
