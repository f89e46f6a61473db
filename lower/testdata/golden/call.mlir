module @jit_call attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %0:2 = func.call @scale(%arg0) : (tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<8x2xf32>)
    %1 = "stablehlo.add"(%0#0, %0#1) : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
    return %1 : tensor<8x2xf32>
  }
  func.func private @scale(%arg0: tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<8x2xf32>) {
    %0 = stablehlo.constant dense<2.0> : tensor<8x2xf32>
    %1 = "stablehlo.multiply"(%arg0, %0) : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
    %2 = "stablehlo.negate"(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %1, %2 : tensor<8x2xf32>, tensor<8x2xf32>
  }
}
