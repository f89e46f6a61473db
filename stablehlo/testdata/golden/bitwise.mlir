module @jit_bitwise attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xui8>, %arg1: tensor<4xui8>, %arg2: tensor<4xi1>, %arg3: tensor<4xi1>) -> (tensor<4xui8>, tensor<4xi1>) {
    %0 = "stablehlo.and"(%arg0, %arg1) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
    %1 = stablehlo.constant dense<1> : tensor<4xui8>
    %2 = "stablehlo.or"(%arg0, %1) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
    %3 = "stablehlo.xor"(%0, %2) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
    %4 = "stablehlo.and"(%arg2, %arg3) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    %5 = stablehlo.constant dense<true> : tensor<4xi1>
    %6 = "stablehlo.xor"(%arg2, %5) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    %7 = "stablehlo.or"(%4, %6) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
    return %3, %7 : tensor<4xui8>, tensor<4xi1>
  }
}
