package stablehlo_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func mustLayout(t *testing.T, lhs, rhs, out string) stablehlo.ConvDims {
	t.Helper()
	d, err := stablehlo.ConvLayout(lhs, rhs, out)
	require.NoError(t, err)
	return d
}

func TestConvLayout(t *testing.T) {
	d := mustLayout(t, "NHWC", "HWIO", "NHWC")
	require.Equal(t, stablehlo.ConvDims{InputBatch: 0, InputFeature: 3, InputSpatial: []int{1, 2}, KernelInput: 2, KernelOutput: 3,
		KernelSpatial: []int{0, 1}, OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int{1, 2}}, d)
	// Spatial dimensions are numbered in the kernel's order (lax.conv_general_permutations).
	d = mustLayout(t, "NCHW", "OIWH", "NHWC")
	require.Equal(t, stablehlo.ConvDims{InputBatch: 0, InputFeature: 1, InputSpatial: []int{3, 2}, KernelInput: 1, KernelOutput: 0,
		KernelSpatial: []int{2, 3}, OutputBatch: 0, OutputFeature: 3, OutputSpatial: []int{2, 1}}, d)
	for _, bad := range [][3]string{{"NHWC", "HWIO", "NHW"}, {"NHHC", "HWIO", "NHWC"}, {"NHWC", "HWIC", "NHWC"}, {"NHWC", "HWIO", "NHDC"}, {"NXWC", "HWIO", "NHWC"}} {
		_, err := stablehlo.ConvLayout(bad[0], bad[1], bad[2])
		require.ErrorIs(t, err, stablehlo.ErrShape, "%v", bad)
	}
}

func TestConvShapes(t *testing.T) {
	f32 := dtypes.Float32
	nhwc := stablehlo.ConvDims{InputFeature: 3, InputSpatial: []int{1, 2}, KernelInput: 2, KernelOutput: 3, KernelSpatial: []int{0, 1},
		OutputFeature: 3, OutputSpatial: []int{1, 2}}
	conv := func(p stablehlo.ConvParams) func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.Conv(a[0], a[1], p) }
	}
	in := []stablehlo.Shape{shp(f32, 2, 5, 6, 3), shp(f32, 3, 3, 3, 4)}
	runOpCases(t, "convolution", []opCase{
		{name: "valid", args: in, build: conv(stablehlo.ConvParams{Dims: nhwc}), want: shp(f32, 2, 3, 4, 4)},
		{name: "same stride 2", args: in, build: conv(stablehlo.ConvParams{Dims: nhwc, Strides: []int{2, 2}, Padding: stablehlo.PadSame}), want: shp(f32, 2, 3, 3, 4)},
		{name: "explicit rhs dilation", args: in, build: conv(stablehlo.ConvParams{Dims: nhwc, Padding: stablehlo.Pads([2]int{1, 2}, [2]int{0, 0}), RhsDilation: []int{2, 1}}),
			want: shp(f32, 2, 4, 4, 4)},
		// SAME pads for the dilated kernel (3 taps dilated by 2 span 5), so the size is kept.
		{name: "same rhs dilation", args: in, build: conv(stablehlo.ConvParams{Dims: nhwc, Padding: stablehlo.PadSame, RhsDilation: []int{2, 1}}),
			want: shp(f32, 2, 5, 6, 4)},
		{name: "lhs dilation", args: in, build: conv(stablehlo.ConvParams{Dims: nhwc, LhsDilation: []int{2, 2}}), want: shp(f32, 2, 7, 9, 4)},
		{name: "depthwise", args: []stablehlo.Shape{shp(f32, 1, 4, 4, 6), shp(f32, 3, 3, 1, 6)}, build: conv(stablehlo.ConvParams{Dims: nhwc, FeatureGroupCount: 6}), want: shp(f32, 1, 2, 2, 6)},
		{name: "batch groups", args: []stablehlo.Shape{shp(f32, 4, 4, 4, 3), shp(f32, 3, 3, 3, 6)}, build: conv(stablehlo.ConvParams{Dims: nhwc, BatchGroupCount: 2}), want: shp(f32, 2, 2, 2, 6)},
		{name: "window larger than input", args: []stablehlo.Shape{shp(f32, 1, 2, 2, 3), in[1]}, build: conv(stablehlo.ConvParams{Dims: nhwc}), want: shp(f32, 1, 0, 0, 4)},
		{name: "features", args: []stablehlo.Shape{in[0], shp(f32, 3, 3, 2, 4)}, build: conv(stablehlo.ConvParams{Dims: nhwc}),
			sentinel: stablehlo.ErrShape, err: "operand 1 (%arg1): shape mismatch: kernel input feature dimension 2 has size 2, want the input features / feature_group_count = 3"},
		{name: "group divisibility", args: in, build: conv(stablehlo.ConvParams{Dims: nhwc, FeatureGroupCount: 2}),
			sentinel: stablehlo.ErrShape, err: "input feature dimension 3 (size 3) is not divisible by feature_group_count 2"},
		{name: "both groups", args: in, build: conv(stablehlo.ConvParams{Dims: nhwc, FeatureGroupCount: 3, BatchGroupCount: 2}),
			sentinel: stablehlo.ErrShape, err: "feature_group_count 3 and batch_group_count 2: one must be 1"},
		{name: "strides", args: in, build: conv(stablehlo.ConvParams{Dims: nhwc, Strides: []int{1, 0}}),
			sentinel: stablehlo.ErrShape, err: "window_strides [1, 0] must be positive"},
		{name: "padding pairs", args: in, build: conv(stablehlo.ConvParams{Dims: nhwc, Padding: stablehlo.Pads([2]int{1, 1})}),
			sentinel: stablehlo.ErrShape, err: "padding [(1, 1)] has 1 pairs for 2 dimensions"},
		{name: "padding mode", args: in, build: conv(stablehlo.ConvParams{Dims: nhwc, Padding: stablehlo.Padding{Mode: "FULL"}}),
			sentinel: stablehlo.ErrShape, err: `unknown padding mode "FULL"`},
		{name: "negative size", args: in, build: conv(stablehlo.ConvParams{Dims: nhwc, Padding: stablehlo.Pads([2]int{-4, -4}, [2]int{0, 0})}),
			sentinel: stablehlo.ErrShape, err: "spatial dimension 0: padding [-4 -4] leaves a negative or overflowing size"},
		{name: "repeated dims", args: in, build: conv(stablehlo.ConvParams{Dims: stablehlo.ConvDims{InputFeature: 1, InputSpatial: []int{1, 2}, KernelInput: 2, KernelOutput: 3,
			KernelSpatial: []int{0, 1}, OutputFeature: 3, OutputSpatial: []int{1, 2}}}),
			sentinel: stablehlo.ErrShape, err: "input dimensions [0, 1, 1, 2]: dimension 1 repeated"},
		{name: "rank", args: []stablehlo.Shape{in[0], shp(f32, 3, 3, 3)}, build: conv(stablehlo.ConvParams{Dims: nhwc}),
			sentinel: stablehlo.ErrShape, err: "lhs and rhs need one rank of 2 or more"},
		{name: "types", args: []stablehlo.Shape{in[0], shp(dtypes.Int32, 3, 3, 3, 4)}, build: conv(stablehlo.ConvParams{Dims: nhwc}),
			sentinel: stablehlo.ErrDType, err: "operand types differ"},
	})
}

func TestConvText(t *testing.T) {
	m := stablehlo.NewModule("m")
	f := m.Main()
	x, w := f.Arg(shp(dtypes.Float32, 1, 3, 7, 7)), f.Arg(shp(dtypes.Float32, 4, 3, 3, 3))
	f.Return(f.Conv(x, w, stablehlo.ConvParams{Dims: mustLayout(t, "NCHW", "OIHW", "NCHW"), Strides: []int{2, 1}, Padding: stablehlo.PadSame}))
	text, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, text, `"stablehlo.convolution"(%arg0, %arg1) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>, rhs_dilation = array<i64: 1, 1>, window_strides = array<i64: 2, 1>}> : (tensor<1x3x7x7xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x7xf32>`)
	p := f.Ops()[0].Params().(stablehlo.ConvParams)
	require.Equal(t, stablehlo.Padding{Mode: "SAME", Pairs: [][2]int{{1, 1}, {1, 1}}}, p.Padding)
	require.Equal(t, 1, p.FeatureGroupCount)
	require.Equal(t, []int{1, 1}, p.LhsDilation)
}

// A small convolution run on the CPU plugin against a direct loop.
func TestConvRun(t *testing.T) {
	c := pjrttest.Client(t)
	m := stablehlo.NewModule("m")
	f := m.Main()
	x, w := f.Arg(shp(dtypes.Float32, 1, 4, 4, 2)), f.Arg(shp(dtypes.Float32, 2, 2, 1, 2))
	f.Return(f.Conv(x, w, stablehlo.ConvParams{Dims: mustLayout(t, "NHWC", "HWIO", "NHWC"), FeatureGroupCount: 2}))
	text, err := m.Build()
	require.NoError(t, err)
	xs, ws := seqF32(32), seqF32(8)
	got := run1(t, c, program{text, []stablehlo.Shape{shp(dtypes.Float32, 1, 4, 4, 2), shp(dtypes.Float32, 2, 2, 1, 2)}}, xs, ws)
	want := make([]float32, 3*3*2)
	for i := range 3 {
		for j := range 3 {
			for ch := range 2 { // depthwise: output channel ch reads input channel ch
				var s float32
				for di := range 2 {
					for dj := range 2 {
						s += xs[((i+di)*4+(j+dj))*2+ch] * ws[(di*2+dj)*2+ch]
					}
				}
				want[(i*3+j)*2+ch] = s
			}
		}
	}
	require.Equal(t, []any{want}, got)
}
