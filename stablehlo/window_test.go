package stablehlo_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func TestPaddingResolve(t *testing.T) {
	for _, tc := range []struct {
		p                   stablehlo.Padding
		in, window, strides []int
		want                [][2]int
		err                 string
	}{
		{stablehlo.PadSame, []int{5, 6}, []int{3, 3}, []int{2, 2}, [][2]int{{1, 1}, {0, 1}}, ""},
		{stablehlo.PadSameLower, []int{5, 6}, []int{3, 3}, []int{2, 2}, [][2]int{{1, 1}, {1, 0}}, ""},
		{stablehlo.PadSame, []int{2}, []int{1}, []int{3}, [][2]int{{0, 0}}, ""},
		{stablehlo.PadValid, []int{5}, []int{3}, []int{1}, [][2]int{{0, 0}}, ""},
		{stablehlo.Padding{}, []int{5}, []int{3}, []int{1}, [][2]int{{0, 0}}, ""},
		{stablehlo.Pads([2]int{1, -1}), []int{5}, []int{3}, []int{1}, [][2]int{{1, -1}}, ""},
		{stablehlo.Pads([2]int{1, -1}), []int{5, 5}, []int{3, 3}, []int{1, 1}, nil, "padding [(1, -1)] has 1 pairs for 2 dimensions"},
		{stablehlo.Padding{Mode: "same"}, []int{5}, []int{3}, []int{2}, [][2]int{{1, 1}}, ""},
		{stablehlo.Padding{Mode: "FULL"}, []int{5}, []int{3}, []int{1}, nil, `unknown padding mode "FULL" (want SAME, SAME_LOWER, VALID, or pairs)`},
	} {
		got, msg := tc.p.Resolve(tc.in, tc.window, tc.strides)
		require.Equal(t, tc.err, msg)
		require.Equal(t, tc.want, got, "%v", tc.p)
	}
}

func TestReduceWindowShapes(t *testing.T) {
	f32 := dtypes.Float32
	rw := func(r stablehlo.Reduction, p stablehlo.ReduceWindowParams) func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
		return func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value { return f.ReduceWindow(a[0], r, p) }
	}
	x := []stablehlo.Shape{shp(f32, 2, 5, 6, 3)}
	runOpCases(t, "reduce_window", []opCase{
		{name: "valid", args: x, build: rw(stablehlo.Max, stablehlo.ReduceWindowParams{Window: []int{1, 2, 2, 1}}), want: shp(f32, 2, 4, 5, 3)},
		{name: "same strided", args: x, build: rw(stablehlo.Sum, stablehlo.ReduceWindowParams{Window: []int{1, 3, 3, 1}, Strides: []int{1, 2, 2, 1}, Padding: stablehlo.PadSame}), want: shp(f32, 2, 3, 3, 3)},
		{name: "dilations", args: x, build: rw(stablehlo.Min, stablehlo.ReduceWindowParams{Window: []int{1, 2, 2, 1}, BaseDilations: []int{1, 2, 1, 1},
			WindowDilations: []int{1, 1, 3, 1}, Padding: stablehlo.Pads([2]int{}, [2]int{1, 0}, [2]int{0, 2}, [2]int{})}), want: shp(f32, 2, 9, 5, 3)},
		// SAME pads for the dilated window (3 dilated by 2 spans 5), so the size is kept.
		{name: "same window dilation", args: x, build: rw(stablehlo.Max, stablehlo.ReduceWindowParams{Window: []int{1, 3, 1, 1},
			WindowDilations: []int{1, 2, 1, 1}, Padding: stablehlo.PadSame}), want: shp(f32, 2, 5, 6, 3)},
		{name: "max pool", args: x, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.MaxPool(a[0], []int{2, 2}, []int{2, 2}, stablehlo.PadSame)
		}, want: shp(f32, 2, 3, 3, 3)},
		{name: "avg pool no batch", args: []stablehlo.Shape{shp(f32, 5, 6, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.AvgPool(a[0], []int{3, 3}, nil, stablehlo.Pads([2]int{1, 1}, [2]int{1, 1}), false)
		}, want: shp(f32, 5, 6, 3)},
		{name: "window rank", args: x, build: rw(stablehlo.Max, stablehlo.ReduceWindowParams{Window: []int{2, 2}}),
			sentinel: stablehlo.ErrShape, err: "window_dimensions [2, 2] needs 4 entries"},
		{name: "zero window", args: x, build: rw(stablehlo.Max, stablehlo.ReduceWindowParams{Window: []int{1, 0, 1, 1}}),
			sentinel: stablehlo.ErrShape, err: "window_dimensions [1, 0, 1, 1] must be positive"},
		{name: "pool rank", args: []stablehlo.Shape{shp(f32, 5, 6)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.MaxPool(a[0], []int{2, 2}, nil, stablehlo.PadValid)
		}, sentinel: stablehlo.ErrShape, err: "pooling a 2-d window needs rank 3 or more (batch..., spatial..., features), got rank 2"},
		{name: "pool padding pairs", args: x, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.MaxPool(a[0], []int{2, 2}, nil, stablehlo.Pads([2]int{1, 1}))
		}, sentinel: stablehlo.ErrShape, err: "padding [(1, 1)] needs 2 pairs, one per window dimension"},
		{name: "avg pool int", args: []stablehlo.Shape{shp(dtypes.Int32, 2, 5, 6, 3)}, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.AvgPool(a[0], []int{2, 2}, nil, stablehlo.PadValid, true)
		}, sentinel: stablehlo.ErrDType, err: "AvgPool needs a float operand"},
		{name: "pred sum", args: []stablehlo.Shape{shp(dtypes.Bool, 4)}, build: rw(stablehlo.Sum, stablehlo.ReduceWindowParams{Window: []int{2}}),
			sentinel: stablehlo.ErrDType, err: "Sum of pred"},
		{name: "func init shape", args: x, build: func(f *stablehlo.Function, a []stablehlo.Value) stablehlo.Value {
			return f.ReduceWindowFunc(a[0], f.Full(shp(f32, 2), float32(0)), stablehlo.ReduceWindowParams{Window: []int{1, 1, 1, 1}},
				func(g *stablehlo.Function, acc, v stablehlo.Value) stablehlo.Value { return g.Add(acc, v) })
		}, sentinel: stablehlo.ErrShape, err: "initial value must be a tensor<f32>, got tensor<2xf32>"},
	})
}

func TestReduceWindowText(t *testing.T) {
	m := stablehlo.NewModule("m")
	f := m.Main()
	x := f.Arg(shp(dtypes.Float32, 4, 5))
	f.Return(f.ReduceWindow(x, stablehlo.Max, stablehlo.ReduceWindowParams{Window: []int{2, 2}, Padding: stablehlo.PadSame}))
	text, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, text, `"stablehlo.reduce_window"(%arg0, %0) <{base_dilations = array<i64: 1, 1>, padding = dense<[[0, 1], [0, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}> ({`)
	require.Contains(t, text, `stablehlo.constant dense<0xFF800000> : tensor<f32>`)
	p := f.Ops()[1].Params().(stablehlo.ReduceWindowParams)
	require.Equal(t, stablehlo.Max, p.Reduction)
	require.Equal(t, [][2]int{{0, 1}, {0, 1}}, p.Padding.Pairs)
}

// Pools and a custom window reduction on the CPU plugin, against direct loops.
func TestReduceWindowRun(t *testing.T) {
	c := pjrttest.Client(t)
	m := stablehlo.NewModule("m")
	f := m.Main()
	x := f.Arg(shp(dtypes.Float32, 1, 3, 4, 1))
	f.Return(f.MaxPool(x, []int{2, 2}, []int{2, 2}, stablehlo.PadSame),
		f.AvgPool(x, []int{2, 2}, []int{2, 2}, stablehlo.PadSame, false),
		f.ReduceWindowFunc(x, f.Constant(100.0), stablehlo.ReduceWindowParams{Window: []int{1, 3, 1, 1}},
			func(g *stablehlo.Function, acc, v stablehlo.Value) stablehlo.Value { return g.Sub(acc, v) }))
	text, err := m.Build()
	require.NoError(t, err)
	got := run1(t, c, program{text, []stablehlo.Shape{shp(dtypes.Float32, 1, 3, 4, 1)}}, seqF32(12))
	// x = [[0 1 2 3] [4 5 6 7] [8 9 10 11]]; SAME pads one row below.
	require.Equal(t, []float32{5, 7, 9, 11}, got[0])
	require.Equal(t, []float32{2.5, 4.5, 8.5, 10.5}, got[1])
	require.Equal(t, []float32{100 - 12, 100 - 15, 100 - 18, 100 - 21}, got[2])
}
