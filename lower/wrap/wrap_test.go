package wrap_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/lower/wrap"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
)

// jaxExported is StableHLO in the form jax.export writes it (pretty ops, no shardings).
const jaxExported = `module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x2xf32>, %arg1: tensor<2xf32> {jax.buffer_donor = true}) -> (tensor<8x2xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<2xf32>) -> tensor<8x2xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<8x2xf32>
    return %1 : tensor<8x2xf32>
  }
}
`

const bareModule = `module {
  func.func @main(%x: tensor<8x2xf32> {mhlo.sharding = "{replicated}", mhlo.layout_mode = "default"}) -> tensor<8x2xf32> {
    %0 = stablehlo.multiply %x, %x : tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}
`

func TestWrap(t *testing.T) {
	tests := []struct {
		name          string
		text          string
		args, results []mesh.NamedSharding
		opts          []wrap.Option
		want          string
	}{
		{
			name: "jax export", text: jaxExported,
			args: []mesh.NamedSharding{ns("x", "y"), ns("y")}, results: []mesh.NamedSharding{ns("x", "y")},
			want: `module @jit_f attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func public @main(%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>, jax.buffer_donor = true}) -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>, jax.result_info = "result"}) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<2xf32>) -> tensor<8x2xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<8x2xf32>
    return %1 : tensor<8x2xf32>
  }
}
`,
		},
		{
			name: "bare module, GSPMD", text: bareModule, opts: []wrap.Option{wrap.WithPartitioner(lower.GSPMD)},
			args: []mesh.NamedSharding{ns("x")}, results: []mesh.NamedSharding{ns(nil, "y")},
			want: `module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  func.func @main(%x: tensor<8x2xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}", mhlo.layout_mode = "default"}) -> (tensor<8x2xf32> {mhlo.sharding = "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}) {
    %0 = stablehlo.multiply %x, %x : tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}
`,
		},
		{
			name: "bare module, result left open", text: bareModule,
			args: []mesh.NamedSharding{ns("x")}, results: []mesh.NamedSharding{{}},
			want: `module attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func @main(%x: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>, mhlo.layout_mode = "default"}) -> tensor<8x2xf32> {
    %0 = stablehlo.multiply %x, %x : tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}
`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := wrap.Module(tc.text, tc.args, tc.results, tc.opts...)
			require.NoError(t, err)
			require.Equal(t, tc.want, p.Text())
			require.Equal(t, 8, p.NumPartitions())
		})
	}
}

func TestWrapErrors(t *testing.T) {
	_, err := wrap.Module("func.func @main() {}", nil, nil)
	require.ErrorIs(t, err, wrap.ErrModule)
	_, err = wrap.Module(bareModule, nil, nil)
	require.ErrorContains(t, err, "wrap: cannot wrap module: @main has 1 arguments and 1 results, got 0 and 0 shardings")
	_, err = wrap.Module(bareModule, []mesh.NamedSharding{ns(nil, nil, "x")}, []mesh.NamedSharding{{}})
	require.ErrorIs(t, err, mesh.ErrRank)
	require.Error(t, err)
	// lower's seed program (f(x) = x * 2, P("x", "y") on mesh42), built with Shardy.
	m := lower.NewModule("jit_seed")
	f := m.Main()
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 2), ns("x", "y"))
	f.Return(f.Mul(x, f.Constant(2.0)))
	f.ShardResults(ns("x", "y"))
	seed, err := m.Build()
	require.NoError(t, err)
	_, err = wrap.Module(seed.Text(), []mesh.NamedSharding{ns()}, []mesh.NamedSharding{{}})
	require.ErrorContains(t, err, "already has sdy.mesh symbols")
}

// trickyModule names @main in a comment and in a string attribute before the real @main.
const trickyModule = `// func.func @main(%c: tensor<1xf32>) -> tensor<1xf32> in a comment
module @m attributes {doc = "module { func.func public @main(%s: tensor<3xf32>) -> tensor<3xf32> {", mhlo.num_partitions = 1 : i32} {
  func.func private @helper(%a: tensor<8x2xf32>) -> tensor<8x2xf32> attributes {note = "func.func @main("} {
    return %a : tensor<8x2xf32> // func.func @main(
  }
  // func.func @main(%c: tensor<1xf32>) -> tensor<1xf32>
  func.func public @main(%arg0: tensor<8x2xf32> {jax.arg_info = "@main(x", mhlo.sharding = "{replicated}"} loc("x.py":1:2)) -> (tensor<8x2xf32> {jax.result_info = "}, {"}) {
    %0 = func.call @helper(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}
`

func TestWrapStringsAndComments(t *testing.T) {
	p, err := wrap.Module(trickyModule, []mesh.NamedSharding{ns("x", "y")}, []mesh.NamedSharding{ns("x")})
	require.NoError(t, err)
	want := `// func.func @main(%c: tensor<1xf32>) -> tensor<1xf32> in a comment
module @m attributes {doc = "module { func.func public @main(%s: tensor<3xf32>) -> tensor<3xf32> {", mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size = 4 : i64}, {name = "y", size = 2 : i64}]}}
  func.func private @helper(%a: tensor<8x2xf32>) -> tensor<8x2xf32> attributes {note = "func.func @main("} {
    return %a : tensor<8x2xf32> // func.func @main(
  }
  // func.func @main(%c: tensor<1xf32>) -> tensor<1xf32>
  func.func public @main(%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>, jax.arg_info = "@main(x"} loc("x.py":1:2)) -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>, jax.result_info = "}, {"}) {
    %0 = func.call @helper(%arg0) : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
}
`
	require.Equal(t, want, p.Text())
}

func TestWrapRejects(t *testing.T) {
	tests := []struct {
		name, text string
		err        error
		msg        string
	}{
		{"main only in a comment", "module {\n  // func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n}\n", wrap.ErrModule, "no func.func @main"},
		{"main only in a string", "module attributes {a = \"func.func @main(%x: tensor<2xf32>)\"} {\n}\n", wrap.ErrModule, "no func.func @main"},
		{"unterminated string", "module {\n  func.func @main(%x: tensor<2xf32> {a = \"@main(}) -> tensor<2xf32> {\n", mlir.ErrSyntax, "2:42: malformed MLIR: unterminated string literal"},
		{"recursion", "module {\n  func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n    %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n  func.func private @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n    %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n}\n",
			mlir.ErrRecursion, "@f calls @f"},
		{"tensor too large", "module {\n  func.func public @main(%x: tensor<4611686018427387904xf32>) -> tensor<2xf32> {\n  }\n}\n", mlir.ErrTensorSize, "overflow"},
		{"infeed", "module {\n  func.func public @main(%t: !stablehlo.token) -> tensor<2xf32> {\n    %0:2 = \"stablehlo.infeed\"(%t) : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)\n    return %0#0 : tensor<2xf32>\n  }\n}\n",
			mlir.ErrUnsupportedOp, "stablehlo.infeed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wrap.Module(tc.text, []mesh.NamedSharding{{}}, []mesh.NamedSharding{{}})
			require.ErrorIs(t, err, wrap.ErrModule)
			require.ErrorIs(t, err, tc.err)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}
