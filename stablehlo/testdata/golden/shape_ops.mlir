module @jit_shape_ops attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>) -> (tensor<4x2x3xf32>, tensor<5x3x2xf32>, tensor<3x4x2xf32>, tensor<24xf32>) {
    %0 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
    %1 = "stablehlo.reshape"(%arg0) : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<3x2xf32>) -> tensor<5x3x2xf32>
    %3 = "stablehlo.transpose"(%0) <{permutation = array<i64: 2, 0, 1>}> : (tensor<4x2x3xf32>) -> tensor<3x4x2xf32>
    %4 = "stablehlo.reshape"(%3) : (tensor<3x4x2xf32>) -> tensor<24xf32>
    return %0, %2, %3, %4 : tensor<4x2x3xf32>, tensor<5x3x2xf32>, tensor<3x4x2xf32>, tensor<24xf32>
  }
}
