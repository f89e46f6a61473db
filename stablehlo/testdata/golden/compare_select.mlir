module @jit_compare_select attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xi64>, %arg2: tensor<4xui32>) -> (tensor<4xf32>, tensor<4xi64>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
    %0 = stablehlo.constant dense<0.5> : tensor<4xf32>
    %1 = "stablehlo.compare"(%arg0, %0) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type FLOAT>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %2 = stablehlo.constant dense<0.0> : tensor<4xf32>
    %3 = "stablehlo.select"(%1, %arg0, %2) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %4 = stablehlo.constant dense<3> : tensor<4xi64>
    %5 = "stablehlo.compare"(%arg1, %4) <{comparison_direction = #stablehlo<comparison_direction EQ>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    %6 = stablehlo.constant dense<3> : tensor<4xi64>
    %7 = "stablehlo.compare"(%arg1, %6) <{comparison_direction = #stablehlo<comparison_direction NE>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    %8 = stablehlo.constant dense<3> : tensor<4xi64>
    %9 = "stablehlo.compare"(%arg1, %8) <{comparison_direction = #stablehlo<comparison_direction LT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    %10 = stablehlo.constant dense<3> : tensor<4xi64>
    %11 = "stablehlo.compare"(%arg1, %10) <{comparison_direction = #stablehlo<comparison_direction LE>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    %12 = stablehlo.constant dense<3> : tensor<4xi64>
    %13 = "stablehlo.compare"(%arg1, %12) <{comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    %14 = stablehlo.constant dense<3> : tensor<4xi64>
    %15 = "stablehlo.compare"(%arg1, %14) <{comparison_direction = #stablehlo<comparison_direction GE>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi1>
    %16 = stablehlo.constant dense<1> : tensor<4xui32>
    %17 = "stablehlo.compare"(%arg2, %16) <{comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type UNSIGNED>}> : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
    %18 = "stablehlo.compare"(%arg0, %arg0) <{comparison_direction = #stablehlo<comparison_direction EQ>, compare_type = #stablehlo<comparison_type FLOAT>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    %19 = stablehlo.constant dense<true> : tensor<i1>
    %20 = "stablehlo.select"(%19, %arg1, %arg1) : (tensor<i1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
    return %3, %20, %5, %7, %9, %11, %13, %15, %17, %18 : tensor<4xf32>, tensor<4xi64>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
  }
}
