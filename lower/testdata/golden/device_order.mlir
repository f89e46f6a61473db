module @jit_device_order attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  sdy.mesh @mesh_0 = <["x"=4, "y"=2], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}], device_ids = dense<[7, 6, 5, 4, 3, 2, 1, 0]> : tensor<8xi64>}}
  func.func public @main(%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh_0, [{"x"}, {}]> : tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}
