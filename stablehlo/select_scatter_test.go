package stablehlo_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// SelectAndScatter adds each window's source element to the window's first maximum (GE),
// as XLA's select_and_scatter with an add scatter: the gradient of a max pool.
func TestSelectAndScatter(t *testing.T) {
	m := stablehlo.NewModule("sas")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 3, 3))
	src := f.Arg(stablehlo.NewShape(dtypes.Float32, 2, 2))
	f.Return(f.SelectAndScatter(x, src, stablehlo.SelectAndScatterParams{Select: stablehlo.GE, Window: []int{2, 2}}))
	text, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, text, `"stablehlo.select_and_scatter"(%arg0, %arg1, %0) <{padding = dense<[[0, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}>`)
	require.Contains(t, text, `comparison_direction = #stablehlo<comparison_direction GE>`)
	got := run1(t, pjrttest.Client(t), program{text, []stablehlo.Shape{x.Shape(), src.Shape()}},
		[]float32{1, 3, 3, 3, 2, 0, 0, 3, 3}, []float32{1, 10, 100, 1000})
	// Windows' first maxima: (0,1) for windows 0 and 1, (1,0) for window 2, (2,1) for window 3.
	require.Equal(t, []any{[]float32{0, 11, 0, 100, 0, 0, 0, 1000, 0}}, got)
}

func TestSelectAndScatterErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  []int
		p    stablehlo.SelectAndScatterParams
		want error
		msg  string
	}{
		{"source shape", []int{3, 3}, stablehlo.SelectAndScatterParams{Select: stablehlo.GE, Window: []int{2, 2}}, stablehlo.ErrShape,
			"source is tensor<3x3xf32>, the windows of operand tensor<3x3xf32> give tensor<2x2xf32>"},
		{"comparison", []int{2, 2}, stablehlo.SelectAndScatterParams{Select: stablehlo.EQ, Window: []int{2, 2}}, stablehlo.ErrDType,
			"select comparison EQ"},
		{"window rank", []int{2, 2}, stablehlo.SelectAndScatterParams{Select: stablehlo.GE, Window: []int{2}}, stablehlo.ErrShape, "window_dimensions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("sas")
			f := m.Main()
			x := f.Arg(stablehlo.NewShape(dtypes.Float32, 3, 3))
			src := f.Arg(stablehlo.NewShape(dtypes.Float32, tc.src...))
			f.Return(f.SelectAndScatter(x, src, tc.p))
			_, err := m.Build()
			require.ErrorIs(t, err, tc.want)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}
