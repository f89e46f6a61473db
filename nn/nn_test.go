package nn_test

import (
	"errors"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/internal/optest"
	"github.com/xlamesh/xlamesh/nn"
	"github.com/xlamesh/xlamesh/stablehlo"
)

var shp = optest.Shape

// TestOneHotShapes checks OneHot's result shape and its error; its values are checked
// against JAX by internal/oracletest's ops_broadcast group.
func TestOneHotShapes(t *testing.T) {
	f32, u8, pred := dtypes.Float32, dtypes.Uint8, dtypes.Bool
	optest.Run(t, "compare", []optest.Case{
		{Name: "one hot", Args: []stablehlo.Shape{shp(u8, 2, 3)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return nn.OneHot(f, a[0], 5, pred)
		}, Want: shp(pred, 2, 3, 5)},
		{Name: "one hot float", Args: []stablehlo.Shape{shp(f32, 2)}, Build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return nn.OneHot(f, a[0], 5, f32)
		}, Sentinel: stablehlo.ErrDType, Err: "indices must be integers"},
	})
}

// The result shapes of the NN helpers.
func TestShapes(t *testing.T) {
	f32 := func(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float32, dims...) }
	bf16 := func(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.BFloat16, dims...) }
	tests := []struct {
		name string
		arg  stablehlo.Shape
		body func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value
		want stablehlo.Shape
	}{
		{"softmax", f32(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return nn.Softmax(f, x) }, f32(2, 3)},
		{"log_softmax", bf16(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return nn.LogSoftmax(f, x, 0) }, bf16(2, 3)},
		{"logsumexp", f32(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return nn.LogSumExp(f, x, 1) }, f32(2)},
		{"logsumexp keepdims", f32(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return nn.LogSumExpKeepDims(f, x) }, f32(1, 1)},
		{"relu int", stablehlo.NewShape(dtypes.Int32, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return nn.Relu(f, x) }, stablehlo.NewShape(dtypes.Int32, 3)},
		{"gelu", f32(3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return nn.Gelu(f, x, false) }, f32(3)},
		{"layer_norm bf16 f32 params", bf16(2, 3, 4), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return nn.LayerNorm(f, x, nn.LayerNormOptions{Scale: f.Full(f32(3, 4), 2.0), Bias: f.Full(f32(3, 4), 1.0), Dims: []int{1, 2}})
		}, f32(2, 3, 4)},
		{"layer_norm bf16", bf16(2, 3), func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return nn.LayerNorm(f, x, nn.LayerNormOptions{})
		}, bf16(2, 3)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("m")
			f := m.Main()
			r := tc.body(f, f.Arg(tc.arg))
			f.Return(r)
			_, err := m.Build()
			require.NoError(t, err)
			require.True(t, tc.want.Equal(r.Shape()), "want %v, got %v", tc.want, r.Shape())
		})
	}
}

// Each helper lowers to the ops JAX emits for it, in order; Relu's maximum is marked with
// stablehlo.ReluParams.
func TestOpSequence(t *testing.T) {
	f32 := stablehlo.NewShape(dtypes.Float32, 2, 3)
	require.Equal(t, "constant reduce reshape broadcast_in_dim subtract exponential constant reduce reshape broadcast_in_dim divide",
		optest.OpNames(t, func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return nn.Softmax(f, x) }, f32))
	require.Equal(t, "constant negate broadcast_in_dim multiply erfc constant multiply multiply",
		optest.OpNames(t, func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return nn.Gelu(f, x, false) }, f32))

	m := stablehlo.NewModule("m")
	f := m.Main()
	f.Return(nn.Relu(f, f.Arg(f32)))
	text, err := m.Build()
	require.NoError(t, err)
	ops := f.Ops()
	require.Len(t, ops, 2)
	require.Equal(t, "stablehlo.maximum", ops[1].Name())
	require.Equal(t, stablehlo.ReluParams{}, ops[1].Params())
	require.Contains(t, text, `"stablehlo.maximum"(%arg0, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`)
}

func TestErrors(t *testing.T) {
	f32 := func(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float32, dims...) }
	tests := []struct {
		name     string
		body     func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value // x is an f32[4, 6] argument
		sentinel error
		msg      string
	}{
		{"softmax scalar", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return nn.Softmax(f, f.Constant(float32(1)))
		},
			stablehlo.ErrShape, "softmax needs an operand of rank 1 or more"},
		{"gelu int", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return nn.Gelu(f, f.Convert(x, dtypes.Int32), true)
		},
			stablehlo.ErrDType, "gelu needs a float operand"},
		{"layer_norm scale shape", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return nn.LayerNorm(f, x, nn.LayerNormOptions{Scale: f.Full(f32(4), 1.0)})
		}, stablehlo.ErrShape, "layer_norm: operand 1 (%0): shape mismatch: scale must be a float tensor of the normalised dimensions' shape [6], got tensor<4xf32>"},
		{"relu pred", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return nn.Relu(f, f.Compare(x, x, stablehlo.EQ))
		}, stablehlo.ErrDType, "maximum: operand 0 (%0): element type mismatch: relu needs a numeric operand, got tensor<4x6xi1>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("m")
			f := m.Main()
			r := tc.body(f, f.Arg(f32(4, 6)))
			require.False(t, r.Valid())
			f.Return(r)
			_, err := m.Build()
			require.ErrorIs(t, err, tc.sentinel)
			require.ErrorContains(t, err, tc.msg)
			var oe *stablehlo.OpError
			require.True(t, errors.As(err, &oe))
		})
	}
}
