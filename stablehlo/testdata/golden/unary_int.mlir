module @jit_unary_int attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xi32>, %arg1: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xi1>) {
    %0 = "stablehlo.negate"(%arg0) : (tensor<4xi32>) -> tensor<4xi32>
    %1 = "stablehlo.abs"(%0) : (tensor<4xi32>) -> tensor<4xi32>
    %2 = "stablehlo.sign"(%1) : (tensor<4xi32>) -> tensor<4xi32>
    %3 = "stablehlo.not"(%2) : (tensor<4xi32>) -> tensor<4xi32>
    %4 = "stablehlo.not"(%arg1) : (tensor<4xi1>) -> tensor<4xi1>
    return %3, %4 : tensor<4xi32>, tensor<4xi1>
  }
}
