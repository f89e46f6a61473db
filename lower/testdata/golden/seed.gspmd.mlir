module @jit_seed attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x2xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) -> (tensor<8x2xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}) {
    %0 = stablehlo.constant dense<2.0> : tensor<8x2xf32>
    %1 = "stablehlo.multiply"(%arg0, %0) : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
    return %1 : tensor<8x2xf32>
  }
}
