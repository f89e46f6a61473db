module @jit_iota attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<4x3xi32>, tensor<5xf32>) {
    %0 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<4x3xi32>
    %1 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<5xf32>
    return %0, %1 : tensor<4x3xi32>, tensor<5xf32>
  }
}
