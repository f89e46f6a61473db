module @jit_reduce attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3x4xi32>) -> (tensor<3xi32>, tensor<2x4xi32>, tensor<3x4xi32>, tensor<i32>) {
    %0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0, 2>}> ({
    ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
      %2 = "stablehlo.add"(%arg1, %arg2) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%2) : (tensor<i32>) -> ()
    }) : (tensor<2x3x4xi32>, tensor<i32>) -> tensor<3xi32>
    %3 = stablehlo.constant dense<1> : tensor<i32>
    %4 = "stablehlo.reduce"(%arg0, %3) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg3: tensor<i32>, %arg4: tensor<i32>):
      %5 = "stablehlo.multiply"(%arg3, %arg4) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%5) : (tensor<i32>) -> ()
    }) : (tensor<2x3x4xi32>, tensor<i32>) -> tensor<2x4xi32>
    %6 = stablehlo.constant dense<-2147483648> : tensor<i32>
    %7 = "stablehlo.reduce"(%arg0, %6) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg5: tensor<i32>, %arg6: tensor<i32>):
      %8 = "stablehlo.maximum"(%arg5, %arg6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%8) : (tensor<i32>) -> ()
    }) : (tensor<2x3x4xi32>, tensor<i32>) -> tensor<3x4xi32>
    %9 = stablehlo.constant dense<2147483647> : tensor<i32>
    %10 = "stablehlo.reduce"(%arg0, %9) <{dimensions = array<i64: 0, 1, 2>}> ({
    ^bb0(%arg7: tensor<i32>, %arg8: tensor<i32>):
      %11 = "stablehlo.minimum"(%arg7, %arg8) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%11) : (tensor<i32>) -> ()
    }) : (tensor<2x3x4xi32>, tensor<i32>) -> tensor<i32>
    return %1, %4, %7, %10 : tensor<3xi32>, tensor<2x4xi32>, tensor<3x4xi32>, tensor<i32>
  }
}
