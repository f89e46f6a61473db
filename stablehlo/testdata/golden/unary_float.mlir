module @jit_unary_float attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>) {
    %0 = "stablehlo.sine"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
    %1 = "stablehlo.cosine"(%0) : (tensor<4xf32>) -> tensor<4xf32>
    %2 = "stablehlo.sign"(%1) : (tensor<4xf32>) -> tensor<4xf32>
    %3 = "stablehlo.ceil"(%2) : (tensor<4xf32>) -> tensor<4xf32>
    %4 = "stablehlo.floor"(%3) : (tensor<4xf32>) -> tensor<4xf32>
    %5 = "stablehlo.logistic"(%4) : (tensor<4xf32>) -> tensor<4xf32>
    %6 = "stablehlo.tanh"(%5) : (tensor<4xf32>) -> tensor<4xf32>
    %7 = "stablehlo.rsqrt"(%6) : (tensor<4xf32>) -> tensor<4xf32>
    %8 = "stablehlo.sqrt"(%7) : (tensor<4xf32>) -> tensor<4xf32>
    %9 = "stablehlo.log"(%8) : (tensor<4xf32>) -> tensor<4xf32>
    %10 = "stablehlo.exponential"(%9) : (tensor<4xf32>) -> tensor<4xf32>
    %11 = "stablehlo.abs"(%10) : (tensor<4xf32>) -> tensor<4xf32>
    %12 = "stablehlo.negate"(%11) : (tensor<4xf32>) -> tensor<4xf32>
    return %12 : tensor<4xf32>
  }
}
