module @jit_collectives attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) -> (tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}, tensor<4x8xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, tensor<8x16xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, tensor<16x8xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, tensor<16x8xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) {
    %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %1 = stablehlo.custom_call @SPMDFullToShardShape(%0) {mhlo.sharding = "{manual}"} : (tensor<16x8xf32>) -> tensor<4x4xf32>
    %2:5 = func.call @shmap_body(%1) : (tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<1x4xf32>, tensor<2x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>)
    %3 = stablehlo.custom_call @Sharding(%2#0) {mhlo.sharding = "{manual}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %4 = stablehlo.custom_call @SPMDShardToFullShape(%3) {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<4x8xf32>) -> tensor<16x8xf32>
    %5 = stablehlo.custom_call @Sharding(%2#1) {mhlo.sharding = "{manual}"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %6 = stablehlo.custom_call @SPMDShardToFullShape(%5) {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<1x4xf32>) -> tensor<4x8xf32>
    %7 = stablehlo.custom_call @Sharding(%2#2) {mhlo.sharding = "{manual}"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    %8 = stablehlo.custom_call @SPMDShardToFullShape(%7) {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<2x8xf32>) -> tensor<8x16xf32>
    %9 = stablehlo.custom_call @Sharding(%2#3) {mhlo.sharding = "{manual}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %10 = stablehlo.custom_call @SPMDShardToFullShape(%9) {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<4x4xf32>) -> tensor<16x8xf32>
    %11 = stablehlo.custom_call @Sharding(%2#4) {mhlo.sharding = "{manual}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %12 = stablehlo.custom_call @SPMDShardToFullShape(%11) {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<4x4xf32>) -> tensor<16x8xf32>
    return %4, %6, %8, %10, %12 : tensor<16x8xf32>, tensor<4x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>
  }
  func.func private @shmap_body(%arg0: tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<1x4xf32>, tensor<2x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
    %0 = "stablehlo.all_gather"(%arg0) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> : (tensor<4x4xf32>) -> tensor<4x8xf32>
    %1 = "stablehlo.reduce_scatter"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>, replica_groups = dense<[[0, 2, 4, 6], [1, 3, 5, 7]]> : tensor<2x4xi64>, scatter_dimension = 0 : i64, use_global_device_ids}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%2) : (tensor<f32>) -> ()
    }) : (tensor<4x4xf32>) -> tensor<1x4xf32>
    %3 = "stablehlo.all_to_all"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, concat_dimension = 1 : i64, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}> : (tensor<4x4xf32>) -> tensor<2x8xf32>
    %4 = "stablehlo.collective_permute"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>, source_target_pairs = dense<[[0, 2], [2, 4], [4, 6], [6, 0], [1, 3], [3, 5], [5, 7], [7, 1]]> : tensor<8x2xi64>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %5 = "stablehlo.all_reduce"(%arg0) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>, replica_groups = dense<[[0, 1], [2, 3], [4, 5], [6, 7]]> : tensor<4x2xi64>, use_global_device_ids}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %6 = "stablehlo.maximum"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%6) : (tensor<f32>) -> ()
    }) : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0, %1, %3, %4, %5 : tensor<4x8xf32>, tensor<1x4xf32>, tensor<2x8xf32>, tensor<4x4xf32>, tensor<4x4xf32>
  }
}
