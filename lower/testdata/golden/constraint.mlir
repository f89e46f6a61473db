module @jit_constraint attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}) {
    %0 = "stablehlo.tanh"(%arg0) : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{}, {"y"}]> : tensor<16x8xf32>
    %2 = stablehlo.constant dense<1.0> : tensor<16x8xf32>
    %3 = "stablehlo.add"(%1, %2) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %4 = sdy.sharding_constraint %3 <@mesh, [{?}, {"x"}]> : tensor<16x8xf32>
    %5 = "stablehlo.multiply"(%4, %1) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    return %5 : tensor<16x8xf32>
  }
}
