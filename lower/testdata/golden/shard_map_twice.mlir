module @jit_shard_map_twice attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<4x4xf32>) {
      %1 = stablehlo.constant dense<0.0> : tensor<4x4xf32>
      %2 = "stablehlo.maximum"(%arg1, %1) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      sdy.return %2 : tensor<4x4xf32>
    } : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %3 = stablehlo.constant dense<0.0> : tensor<16x8xf32>
    %4 = "stablehlo.add"(%0, %3) : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
    %5 = sdy.manual_computation(%4) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%arg2: tensor<4x4xf32>) {
      %6 = stablehlo.constant dense<0.0> : tensor<4x4xf32>
      %7 = "stablehlo.maximum"(%arg2, %6) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
      sdy.return %7 : tensor<4x4xf32>
    } : (tensor<16x8xf32>) -> tensor<16x8xf32>
    %8 = func.call @shmap_body(%5) : (tensor<16x8xf32>) -> tensor<16x8xf32>
    return %8 : tensor<16x8xf32>
  }
  func.func private @shmap_body(%arg0: tensor<16x8xf32>) -> (tensor<16x8xf32>) {
    %0 = "stablehlo.negate"(%arg0) : (tensor<16x8xf32>) -> tensor<16x8xf32>
    return %0 : tensor<16x8xf32>
  }
}
