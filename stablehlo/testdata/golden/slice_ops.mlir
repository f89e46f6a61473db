module @jit_slice_ops attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<6x4xf32>, %arg1: tensor<i32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<6x4xf32>) {
    %0 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 5, 4>, start_indices = array<i64: 1, 0>, strides = array<i64: 2, 3>}> : (tensor<6x4xf32>) -> tensor<2x2xf32>
    %1 = stablehlo.constant dense<1> : tensor<i32>
    %2 = "stablehlo.dynamic_slice"(%arg0, %arg1, %1) <{slice_sizes = array<i64: 2, 2>}> : (tensor<6x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
    %3 = stablehlo.constant dense<0> : tensor<i32>
    %4 = "stablehlo.dynamic_update_slice"(%arg0, %2, %3, %arg1) : (tensor<6x4xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<6x4xf32>
    return %0, %2, %4 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<6x4xf32>
  }
}
