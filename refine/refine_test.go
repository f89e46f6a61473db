package refine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/refine"
	"github.com/xlamesh/xlamesh/shapes"
)

// poly is a module as jax.export writes one for f(x: f32[b, 4]) = (x * 2 broadcast over b,
// iota(b), a reduce_window over b), read to the generic form: @main computes b, asserts b >= 1
// and calls the function with b as a dimension variable.
const poly = `module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?x4xf32>) -> (tensor<?x4xf32> {jax.result_info = "result[0]"}, tensor<?xi32>, tensor<?x4xf32>) {
    %0 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.get_dimension_size"(%arg0) <{dimension = 0 : i64}> : (tensor<?x4xf32>) -> tensor<i32>
    %2 = "stablehlo.compare"(%1, %0) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GE>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.custom_call"(%2, %1) <{api_version = 2 : i32, call_target_name = "shape_assertion", has_side_effect = true}> {error_message = "Expected value >= 1 for dimension variable 'b'; 'b' = {0}."} : (tensor<i1>, tensor<i32>) -> ()
    %3, %4, %5 = "func.call"(%1, %arg0) <{callee = @inner}> : (tensor<i32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?xi32>, tensor<?x4xf32>)
    "func.return"(%3, %4, %5) : (tensor<?x4xf32>, tensor<?xi32>, tensor<?x4xf32>) -> ()
  }
  func.func private @inner(%arg0: tensor<i32> {jax.global_constant = "b"}, %arg1: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?xi32>, tensor<?x4xf32>) {
    %0 = "stablehlo.constant"() <{value = dense<2.0e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.constant"() <{value = dense<4> : tensor<1xi32>}> : () -> tensor<1xi32>
    %2 = "stablehlo.reshape"(%arg0) : (tensor<i32>) -> tensor<1xi32>
    %3 = "stablehlo.concatenate"(%2, %1) <{dimension = 0 : i64}> : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %4 = "stablehlo.dynamic_broadcast_in_dim"(%0, %3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32>
    %5 = "stablehlo.multiply"(%arg1, %4) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %6 = "stablehlo.dynamic_iota"(%2) <{iota_dimension = 0 : i64}> : (tensor<1xi32>) -> tensor<?xi32>
    %7 = "stablehlo.reduce_window"(%5, %0) <{padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 1>}> ({
    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
      %8 = "stablehlo.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%8) : (tensor<f32>) -> ()
    }) : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
    "func.return"(%5, %6, %7) : (tensor<?x4xf32>, tensor<?xi32>, tensor<?x4xf32>) -> ()
  }
}
`

// TestModule refines the module for b = 3: every type static, the dynamic ops static ones,
// the assertion gone, and the result a module mlir.Check accepts.
func TestModule(t *testing.T) {
	out, err := refine.Module(poly, []shapes.Shape{shapes.Make(dtypes.Float32, 3, 4)})
	require.NoError(t, err)
	assert.NotContains(t, out, "?")
	assert.NotContains(t, out, "dynamic_")
	assert.NotContains(t, out, "shape_assertion")
	for _, want := range []string{
		"@main(%arg0: tensor<3x4xf32>) -> (tensor<3x4xf32> {jax.result_info = \"result[0]\"}, tensor<3xi32>, tensor<3x4xf32>)",
		`"func.call"(%1, %arg0) <{callee = @inner}> : (tensor<i32>, tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3xi32>, tensor<3x4xf32>)`,
		`"stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<3x4xf32>`,
		`"stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<3xi32>`,
		`: (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>`,
	} {
		assert.Contains(t, out, want)
	}
	require.NoError(t, mlir.Check(out), out)

	// A failing assertion is JAX's message with the values filled in.
	_, err = refine.Module(poly, []shapes.Shape{shapes.Make(dtypes.Float32, 0, 4)})
	require.True(t, errors.Is(err, refine.ErrShapeAssertion), "%v", err)
	assert.ErrorContains(t, err, "Expected value >= 1 for dimension variable 'b'; 'b' = 0.")

	// Arguments that do not fit @main's types.
	for _, args := range [][]shapes.Shape{
		{shapes.Make(dtypes.Float32, 3, 5)},
		{shapes.Make(dtypes.Int32, 3, 4)},
		{shapes.Make(dtypes.Float32, 3)},
		{},
	} {
		_, err := refine.Module(poly, args)
		assert.True(t, errors.Is(err, refine.ErrArguments), "%v: %v", args, err)
	}
}

// TestSignature reads @main's types with -1 for dynamic dimensions, and what Polymorphic says.
func TestSignature(t *testing.T) {
	args, results, n, err := refine.Signature(poly)
	require.NoError(t, err)
	assert.Equal(t, []int{-1, 4}, args[0].Dims())
	assert.Len(t, results, 3)
	assert.Equal(t, []int{-1}, results[1].Dims())
	assert.Equal(t, dtypes.Int32, results[1].DType())
	assert.Equal(t, 1, n)
	assert.True(t, refine.Polymorphic(poly))
	static := "module @m attributes {jax.uses_shape_polymorphism = false} {\n  func.func public @main(%arg0: tensor<3x4xf32>) -> (tensor<3x4xf32>) {\n" +
		"    \"func.return\"(%arg0) : (tensor<3x4xf32>) -> ()\n  }\n}\n"
	assert.False(t, refine.Polymorphic(static))
}

// TestUnsupported: what refinement cannot make static is an error naming the op, never a
// module with dynamic types.
func TestUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string
		want           error
		msg            string
	}{
		{"an op without a rule", `"stablehlo.multiply"(%arg1, %4)`, `"stablehlo.cholesky"(%arg1, %4)`, refine.ErrUnsupported,
			"@inner: stablehlo.cholesky: refine: not refined: refining stablehlo.cholesky with dynamic shapes"},
		{"a shape from run-time values", `"stablehlo.dynamic_iota"(%2)`, `"stablehlo.dynamic_iota"(%arg0x)`, refine.ErrSyntax,
			"operand %arg0x is not defined before"},
		{"not the generic form", `"stablehlo.reshape"(%arg0) : (tensor<i32>) -> tensor<1xi32>`, `stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32>`,
			refine.ErrSyntax, "expected"},
		{"bounded dynamism", `tensor<?x4xf32>) -> tensor<?x4xf32>
    %6`, `tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<?x4xf32>
    %6`, refine.ErrUnsupported, "with an encoding (bounded dynamism)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(poly, tc.old, tc.new, 1)
			require.NotEqual(t, poly, text)
			_, err := refine.Module(text, []shapes.Shape{shapes.Make(dtypes.Float32, 3, 4)})
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.want), "%v", err)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
}
