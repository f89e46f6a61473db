module @jit_constraint attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}) -> (tensor<16x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}) {
    %0 = "stablehlo.tanh"(%arg0) : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %1 = stablehlo.custom_call @Sharding(%0) {mhlo.sharding = "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %2 = stablehlo.constant dense<1.0> : tensor<16x8xf32>
    %3 = "stablehlo.add"(%1, %2) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %4 = stablehlo.custom_call @Sharding(%3) {backend_config = "unspecified_dims=[0]", mhlo.sharding = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %5 = "stablehlo.multiply"(%4, %1) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    return %5 : tensor<16x8xf32>
  }
}
