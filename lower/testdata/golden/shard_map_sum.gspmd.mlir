module @jit_shard_map_sum attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) -> (tensor<f32> {mhlo.sharding = "{replicated}"}, tensor<4x2xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<16x8xf32>) -> tensor<4x4xf32>
    %2:2 = func.call @shmap_body(%1) : (tensor<4x4xf32>) -> (tensor<f32>, tensor<1x1xf32>)
    %3 = stablehlo.custom_call @Sharding(%2#0) {mhlo.sharding = "{manual}"} : (tensor<f32>) -> tensor<f32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{replicated}"} : (tensor<f32>) -> tensor<f32>
    %5 = stablehlo.custom_call @Sharding(%2#1) {mhlo.sharding = "{manual}"} : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %6 = stablehlo.custom_call @SPMDShardToFullShape(%5) {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<1x1xf32>) -> tensor<4x2xf32>
    return %4, %6 : tensor<f32>, tensor<4x2xf32>
  }
  func.func private @shmap_body(%arg0: tensor<4x4xf32>) -> (tensor<f32>, tensor<1x1xf32>) {
    %0 = stablehlo.constant dense<0.0> : tensor<f32>
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%2) : (tensor<f32>) -> ()
    }) : (tensor<4x4xf32>, tensor<f32>) -> tensor<f32>
    %3 = "stablehlo.all_reduce"(%1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3, 4, 5, 6, 7]]> : tensor<1x8xi64>, use_global_device_ids}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %4 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%4) : (tensor<f32>) -> ()
    }) : (tensor<f32>) -> tensor<f32>
    %5 = "stablehlo.reshape"(%1) : (tensor<f32>) -> tensor<1x1xf32>
    return %3, %5 : tensor<f32>, tensor<1x1xf32>
  }
}
