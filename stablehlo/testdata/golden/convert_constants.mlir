module @jit_convert_constants attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<f32>, tensor<f64>, tensor<bf16>, tensor<2xf32>, tensor<3xf32>, tensor<f32>, tensor<i64>, tensor<ui64>, tensor<2x3xi32>, tensor<ui16>) {
    %0 = stablehlo.constant dense<[[false, true], [false, true]]> : tensor<2x2xi1>
    %1 = "stablehlo.convert"(%0) : (tensor<2x2xi1>) -> tensor<2x2xf32>
    %2 = stablehlo.constant dense<[[0, 1], [0, 1]]> : tensor<2x2xi8>
    %3 = "stablehlo.convert"(%2) : (tensor<2x2xi8>) -> tensor<2x2xf32>
    %4 = stablehlo.constant dense<[[0, 1], [0, 1]]> : tensor<2x2xi16>
    %5 = "stablehlo.convert"(%4) : (tensor<2x2xi16>) -> tensor<2x2xf32>
    %6 = stablehlo.constant dense<[[0, 1], [0, 1]]> : tensor<2x2xi32>
    %7 = "stablehlo.convert"(%6) : (tensor<2x2xi32>) -> tensor<2x2xf32>
    %8 = stablehlo.constant dense<[[0, 1], [0, 1]]> : tensor<2x2xi64>
    %9 = "stablehlo.convert"(%8) : (tensor<2x2xi64>) -> tensor<2x2xf32>
    %10 = stablehlo.constant dense<[[0, 1], [0, 1]]> : tensor<2x2xui8>
    %11 = "stablehlo.convert"(%10) : (tensor<2x2xui8>) -> tensor<2x2xf32>
    %12 = stablehlo.constant dense<[[0, 1], [0, 1]]> : tensor<2x2xui16>
    %13 = "stablehlo.convert"(%12) : (tensor<2x2xui16>) -> tensor<2x2xf32>
    %14 = stablehlo.constant dense<[[0, 1], [0, 1]]> : tensor<2x2xui32>
    %15 = "stablehlo.convert"(%14) : (tensor<2x2xui32>) -> tensor<2x2xf32>
    %16 = stablehlo.constant dense<[[0, 1], [0, 1]]> : tensor<2x2xui64>
    %17 = "stablehlo.convert"(%16) : (tensor<2x2xui64>) -> tensor<2x2xf32>
    %18 = stablehlo.constant dense<[[0.0, 1.0], [0.0, 1.0]]> : tensor<2x2xf16>
    %19 = "stablehlo.convert"(%18) : (tensor<2x2xf16>) -> tensor<2x2xf32>
    %20 = stablehlo.constant dense<[[0.0, 1.0], [0.0, 1.0]]> : tensor<2x2xbf16>
    %21 = "stablehlo.convert"(%20) : (tensor<2x2xbf16>) -> tensor<2x2xf32>
    %22 = stablehlo.constant dense<[[0.0, 1.0], [0.0, 1.0]]> : tensor<2x2xf32>
    %23 = "stablehlo.convert"(%22) : (tensor<2x2xf32>) -> tensor<2x2xf32>
    %24 = stablehlo.constant dense<[[0.0, 1.0], [0.0, 1.0]]> : tensor<2x2xf64>
    %25 = "stablehlo.convert"(%24) : (tensor<2x2xf64>) -> tensor<2x2xf32>
    %26 = stablehlo.constant dense<1.5> : tensor<f32>
    %27 = stablehlo.constant dense<1.0e+300> : tensor<f64>
    %28 = stablehlo.constant dense<0.1> : tensor<bf16>
    %29 = stablehlo.constant dense<-0.0> : tensor<2xf32>
    %30 = stablehlo.constant dense<[1.0, 2.5, -3.0e-07]> : tensor<3xf32>
    %31 = stablehlo.constant dense<3.4e+38> : tensor<f32>
    %32 = stablehlo.constant dense<-9223372036854775808> : tensor<i64>
    %33 = stablehlo.constant dense<18446744073709551615> : tensor<ui64>
    %34 = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
    %35 = stablehlo.constant dense<7> : tensor<ui16>
    return %1, %3, %5, %7, %9, %11, %13, %15, %17, %19, %21, %23, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<f32>, tensor<f64>, tensor<bf16>, tensor<2xf32>, tensor<3xf32>, tensor<f32>, tensor<i64>, tensor<ui64>, tensor<2x3xi32>, tensor<ui16>
  }
}
