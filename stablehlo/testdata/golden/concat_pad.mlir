module @jit_concat_pad attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<1x3xf32>) -> (tensor<5x3xf32>, tensor<4x5xf32>, tensor<4x4xf32>) {
    %0 = "stablehlo.concatenate"(%arg0, %arg1, %arg0) <{dimension = 0 : i64}> : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>
    %1 = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = "stablehlo.pad"(%arg0, %1) <{edge_padding_high = array<i64: 0, 2>, edge_padding_low = array<i64: 1, 0>, interior_padding = array<i64: 1, 0>}> : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x5xf32>
    %3 = stablehlo.constant dense<-1.0> : tensor<f32>
    %4 = "stablehlo.pad"(%0, %3) <{edge_padding_high = array<i64: 0, 0>, edge_padding_low = array<i64: -1, 1>, interior_padding = array<i64: 0, 0>}> : (tensor<5x3xf32>, tensor<f32>) -> tensor<4x4xf32>
    return %0, %2, %4 : tensor<5x3xf32>, tensor<4x5xf32>, tensor<4x4xf32>
  }
}
