package refine_test

import (
	"errors"
	"regexp"
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

// prettyPoly is poly as MLIR's default printer writes it: custom forms, a group of results
// (%3:3, %3#1), locations and their aliases.
const prettyPoly = `#loc = loc(unknown)
#loc1 = loc("x")
module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<?x4xf32> loc("x")) -> (tensor<?x4xf32> {jax.result_info = "result[0]"}, tensor<?xi32>, tensor<?x4xf32>) {
    %c = stablehlo.constant dense<1> : tensor<i32> loc(#loc)
    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32> loc(#loc2)
    %1 = stablehlo.compare  GE, %0, %c,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1> loc(#loc3)
    stablehlo.custom_call @shape_assertion(%1, %0) {api_version = 2 : i32, error_message = "Expected value >= 1 for dimension variable 'b'; 'b' = {0}.", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> () loc(#loc4)
    %3:3 = call @inner(%0, %arg0) : (tensor<i32>, tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?xi32>, tensor<?x4xf32>) loc(#loc)
    return %3#0, %3#1, %3#2 : tensor<?x4xf32>, tensor<?xi32>, tensor<?x4xf32> loc(#loc)
  } loc(#loc)
  func.func private @inner(%arg0: tensor<i32> {jax.global_constant = "b"} loc(unknown), %arg1: tensor<?x4xf32> loc("x"("y"))) -> (tensor<?x4xf32>, tensor<?xi32>, tensor<?x4xf32>) {
    %cst = stablehlo.constant dense<2.0e+00> : tensor<f32> loc(#loc)
    %c = stablehlo.constant dense<4> : tensor<1xi32> loc(#loc)
    %0 = stablehlo.reshape %arg0 : (tensor<i32>) -> tensor<1xi32> loc(#loc)
    %1 = stablehlo.concatenate %0, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32> loc(#loc)
    %2 = stablehlo.dynamic_broadcast_in_dim %cst, %1, dims = [] : (tensor<f32>, tensor<2xi32>) -> tensor<?x4xf32> loc(#loc)
    %3 = stablehlo.multiply %arg1, %2 : tensor<?x4xf32> loc(#loc)
    %4 = stablehlo.dynamic_iota %0, dim = 0 : (tensor<1xi32>) -> tensor<?xi32> loc(#loc)
    %5 = "stablehlo.reduce_window"(%3, %cst) <{padding = dense<[[1, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 1>}> ({
    ^bb0(%arg2: tensor<f32> loc(unknown), %arg3: tensor<f32> loc(unknown)):
      %6 = stablehlo.add %arg2, %arg3 : tensor<f32> loc(#loc)
      stablehlo.return %6 : tensor<f32> loc(#loc)
    }) : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32> loc(#loc)
    return %3, %4, %5 : tensor<?x4xf32>, tensor<?xi32>, tensor<?x4xf32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc2 = loc("dimension_size"(#loc1))
#loc3 = loc("ge")
#loc4 = loc("shape_assertion")
`

// TestPrettyModule refines poly as MLIR prints it: the same module as from its generic form,
// the same failing assertion.
func TestPrettyModule(t *testing.T) {
	args := []shapes.Shape{shapes.Make(dtypes.Float32, 3, 4)}
	want, err := refine.Module(poly, args)
	require.NoError(t, err)
	got, err := refine.Module(prettyPoly, args)
	require.NoError(t, err)
	// The values are named as each text names them; the ops, types and attributes are the same.
	names := regexp.MustCompile(`%[A-Za-z0-9_]+`)
	assert.Equal(t, names.ReplaceAllString(want, "%v"), names.ReplaceAllString(got, "%v"))
	assert.NotContains(t, got, "loc(")
	require.NoError(t, mlir.Check(got))
	_, err = refine.Module(prettyPoly, []shapes.Shape{shapes.Make(dtypes.Float32, 0, 4)})
	require.True(t, errors.Is(err, refine.ErrShapeAssertion), "%v", err)
	assert.ErrorContains(t, err, "Expected value >= 1 for dimension variable 'b'; 'b' = 0.")
	for _, bad := range []struct{ old, new, msg string }{
		{"#loc1 = loc(\"x\")", "#map = affine_map<(d0) -> (d0)>", "the attribute alias #map (only location aliases are read)"},
		{"%3:3 = call", "%3:0 = call", "a group of 0 results"},
		{"return %3#0, %3#1, %3#2", "return %3#0, %3#1, %3#3", "%3#3 is not a result of a group"},
		{"dims = []", "dims = [x]", "is not a list of integers"},
		{"dim = 0 :", "dim = zero :", "is not an integer"},
		{"SIGNED :", "SIGNED, %c :", "expected"},
	} {
		text := strings.Replace(prettyPoly, bad.old, bad.new, 1)
		require.NotEqual(t, prettyPoly, text, bad.old)
		_, err := refine.Module(text, args)
		assert.ErrorContains(t, err, bad.msg, bad.old)
		assert.True(t, errors.Is(err, refine.ErrSyntax) || errors.Is(err, refine.ErrUnsupported), "%v", err)
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
		{"a custom form not read", `"stablehlo.reshape"(%arg0) : (tensor<i32>) -> tensor<1xi32>`,
			`stablehlo.einsum %arg0, config = "i->i" : (tensor<i32>) -> tensor<1xi32>`, refine.ErrUnsupported,
			"stablehlo.einsum in its custom form (the generic form, or the module's bytecode, is read)"},
		{"a custom form misread", `"stablehlo.reshape"(%arg0) : (tensor<i32>) -> tensor<1xi32>`,
			`stablehlo.reshape %arg0, dims = [0] : (tensor<i32>) -> tensor<1xi32>`, refine.ErrUnsupported,
			`stablehlo.reshape: the entry "dims" of its custom form`},
		{"a group used past its end", `"stablehlo.reshape"(%arg0)`, `"stablehlo.reshape"(%arg0#1)`, refine.ErrSyntax,
			"%arg0#1 is not a result of a group of results"},
		{"bounded dynamism", `tensor<?x4xf32>) -> tensor<?x4xf32>
    %6`, `tensor<?x4xf32, #stablehlo.bounds<8, ?>>) -> tensor<?x4xf32>
    %6`, refine.ErrUnsupported, "with an encoding (bounded dynamism)"},
		{"a dynamic type in an attribute", `tensor<1xi32>}>`, "tensor<1xi32>}<?xi32>\n>", refine.ErrUnsupported,
			"a dynamic type is left after refinement: %1 = \"stablehlo.constant\"() <{value = dense<4> : tensor<1xi32>}<?xi32>"},
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
