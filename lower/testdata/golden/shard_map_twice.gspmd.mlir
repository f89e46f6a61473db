module @jit_shard_map_twice attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) -> (tensor<16x8xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<16x8xf32>) -> tensor<4x4xf32>
    %2 = func.call @shmap_body_1(%1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %3 = stablehlo.custom_call @Sharding(%2) {mhlo.sharding = "{manual}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<4x4xf32>) -> tensor<16x8xf32>
    %5 = stablehlo.constant dense<0.0> : tensor<16x8xf32>
    %6 = "stablehlo.add"(%4, %5) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %7 = stablehlo.custom_call @Sharding(%6) {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %8 = stablehlo.custom_call @SPMDFullToShardShape(%7) {mhlo.sharding = "{manual}"} : (tensor<16x8xf32>) -> tensor<4x4xf32>
    %9 = func.call @shmap_body_2(%8) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %10 = stablehlo.custom_call @Sharding(%9) {mhlo.sharding = "{manual}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %11 = stablehlo.custom_call @SPMDShardToFullShape(%10) {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<4x4xf32>) -> tensor<16x8xf32>
    %12 = func.call @shmap_body(%11) : (tensor<16x8xf32>) -> tensor<16x8xf32>
    return %12 : tensor<16x8xf32>
  }
  func.func private @shmap_body(%arg0: tensor<16x8xf32>) -> (tensor<16x8xf32>) {
    %0 = "stablehlo.negate"(%arg0) : (tensor<16x8xf32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
  func.func private @shmap_body_1(%arg0: tensor<4x4xf32>) -> (tensor<4x4xf32>) {
    %0 = stablehlo.constant dense<0.0> : tensor<4x4xf32>
    %1 = "stablehlo.maximum"(%arg0, %0) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    return %1 : tensor<4x4xf32>
  }
  func.func private @shmap_body_2(%arg0: tensor<4x4xf32>) -> (tensor<4x4xf32>) {
    %0 = stablehlo.constant dense<0.0> : tensor<4x4xf32>
    %1 = "stablehlo.maximum"(%arg0, %0) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    return %1 : tensor<4x4xf32>
  }
}
