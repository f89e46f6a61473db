module @jit_special_floats attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32>) -> (tensor<f32>, tensor<f16>, tensor<bf16>, tensor<f64>, tensor<i8>, tensor<ui32>) {
    %0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = "stablehlo.reduce"(%arg0, %0) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %2 = "stablehlo.maximum"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%2) : (tensor<f32>) -> ()
    }) : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    %3 = "stablehlo.convert"(%arg0) : (tensor<3xf32>) -> tensor<3xf16>
    %4 = stablehlo.constant dense<0x7C00> : tensor<f16>
    %5 = "stablehlo.reduce"(%3, %4) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg3: tensor<f16>, %arg4: tensor<f16>):
      %6 = "stablehlo.minimum"(%arg3, %arg4) : (tensor<f16>, tensor<f16>) -> tensor<f16>
      "stablehlo.return"(%6) : (tensor<f16>) -> ()
    }) : (tensor<3xf16>, tensor<f16>) -> tensor<f16>
    %7 = "stablehlo.convert"(%arg0) : (tensor<3xf32>) -> tensor<3xbf16>
    %8 = stablehlo.constant dense<0xFF80> : tensor<bf16>
    %9 = "stablehlo.reduce"(%7, %8) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg5: tensor<bf16>, %arg6: tensor<bf16>):
      %10 = "stablehlo.maximum"(%arg5, %arg6) : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
      "stablehlo.return"(%10) : (tensor<bf16>) -> ()
    }) : (tensor<3xbf16>, tensor<bf16>) -> tensor<bf16>
    %11 = "stablehlo.convert"(%arg0) : (tensor<3xf32>) -> tensor<3xf64>
    %12 = stablehlo.constant dense<0x7FF0000000000000> : tensor<f64>
    %13 = "stablehlo.reduce"(%11, %12) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg7: tensor<f64>, %arg8: tensor<f64>):
      %14 = "stablehlo.minimum"(%arg7, %arg8) : (tensor<f64>, tensor<f64>) -> tensor<f64>
      "stablehlo.return"(%14) : (tensor<f64>) -> ()
    }) : (tensor<3xf64>, tensor<f64>) -> tensor<f64>
    %15 = "stablehlo.convert"(%arg0) : (tensor<3xf32>) -> tensor<3xi8>
    %16 = stablehlo.constant dense<-128> : tensor<i8>
    %17 = "stablehlo.reduce"(%15, %16) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg9: tensor<i8>, %arg10: tensor<i8>):
      %18 = "stablehlo.maximum"(%arg9, %arg10) : (tensor<i8>, tensor<i8>) -> tensor<i8>
      "stablehlo.return"(%18) : (tensor<i8>) -> ()
    }) : (tensor<3xi8>, tensor<i8>) -> tensor<i8>
    %19 = "stablehlo.convert"(%arg0) : (tensor<3xf32>) -> tensor<3xui32>
    %20 = stablehlo.constant dense<4294967295> : tensor<ui32>
    %21 = "stablehlo.reduce"(%19, %20) <{dimensions = array<i64: 0>}> ({
    ^bb0(%arg11: tensor<ui32>, %arg12: tensor<ui32>):
      %22 = "stablehlo.minimum"(%arg11, %arg12) : (tensor<ui32>, tensor<ui32>) -> tensor<ui32>
      "stablehlo.return"(%22) : (tensor<ui32>) -> ()
    }) : (tensor<3xui32>, tensor<ui32>) -> tensor<ui32>
    return %1, %5, %9, %13, %17, %21 : tensor<f32>, tensor<f16>, tensor<bf16>, tensor<f64>, tensor<i8>, tensor<ui32>
  }
}
