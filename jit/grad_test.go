package jit_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// ValueAndGrad's gradient comes back with its argument's sharding: d sum(x*x)/dx = 2x.
func TestValueAndGrad(t *testing.T) {
	c := pjrttest.Client(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, []float32{0, 1, 2, 3, 4, 5, 6, 7}, []int{4, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x.Close()
	square := func(f *lower.Function, a []lower.Value) lower.Value { return f.Sum(f.Mul(a[0], a[0])) }
	fn := jit.New("vg", jit.ValueAndGrad(square, 0), jit.OutSpecs(mesh.P(), mesh.P("x", "y")))
	defer fn.Close()
	out, err := fn.Call(c, x)
	require.NoError(t, err)
	defer func() {
		for _, o := range out {
			o.Close()
		}
	}()
	l, err := out[0].ToHost()
	require.NoError(t, err)
	g, err := out[1].ToHost()
	require.NoError(t, err)
	require.Equal(t, []float32{140}, l)
	require.Equal(t, []float32{0, 2, 4, 6, 8, 10, 12, 14}, g)
	require.True(t, out[1].Sharding().Spec().Equal(mesh.P("x", "y")))
}

func TestValueAndGradErrors(t *testing.T) {
	abs := mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y").Abstract()
	sum := func(f *lower.Function, a []lower.Value) lower.Value { return f.Sum(f.Convert(a[0], dtypes.Float32)) }
	for _, tc := range []struct {
		name  string
		wrt   int
		dtype dtypes.DType
		want  error
	}{
		{"out_of_range", 1, dtypes.Float32, autodiff.ErrCotangent},
		{"integer", 0, dtypes.Int32, autodiff.ErrNotFloat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn := jit.New("vg", jit.ValueAndGrad(sum, tc.wrt))
			defer fn.Close()
			_, err := fn.Lower(abs, jit.ArgType{Shape: lower.NewShape(tc.dtype, 4), Spec: mesh.P()})
			require.ErrorIs(t, err, jit.ErrLowering)
			require.ErrorIs(t, err, tc.want)
		})
	}
}
