package wrap_test

import (
	"fmt"

	"github.com/xlamesh/xlamesh/lower/wrap"
	"github.com/xlamesh/xlamesh/mesh"
)

// Module annotates a module exported by another tool.
func ExampleModule() {
	text := `module @jit_g {
  func.func public @main(%arg0: tensor<8xf32>) -> (tensor<8xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.sine %arg0 : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
}
`
	abs := mesh.MustAbstract([]int{2}, []string{"b"})
	s, _ := mesh.NewAbstractSharding(abs, mesh.P("b"))
	prog, err := wrap.Module(text, []mesh.NamedSharding{s}, []mesh.NamedSharding{s})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(prog.Text())
	// Output:
	// module @jit_g attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
	//   sdy.mesh @mesh = <["b"=2]> {stablehlo.mesh = {axes = [{name = "b", size = 2 : i64}]}}
	//   func.func public @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>, jax.result_info = "result"}) {
	//     %0 = stablehlo.sine %arg0 : tensor<8xf32>
	//     return %0 : tensor<8xf32>
	//   }
	// }
}
