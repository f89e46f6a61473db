module @jit_dot_general attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3x2x5xf32>, %arg1: tensor<3x5x4xf32>) -> (tensor<3x2x4xf32>, tensor<3x2x5x3x5x4xf32>) {
    %0 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : (tensor<3x2x5xf32>, tensor<3x5x4xf32>) -> tensor<3x2x4xf32>
    %1 = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<>}> : (tensor<3x2x5xf32>, tensor<3x5x4xf32>) -> tensor<3x2x5x3x5x4xf32>
    return %0, %1 : tensor<3x2x4xf32>, tensor<3x2x5x3x5x4xf32>
  }
}
