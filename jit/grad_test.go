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

// On a mesh of Explicit axes the results' types are their layouts: without OutSpecs,
// ValueAndGrad's gradients come back with their parameters' shardings, and the values are
// those of the same program on an Auto mesh.
func TestValueAndGradExplicit(t *testing.T) {
	c := pjrttest.Client(t)
	pjrttest.NeedDevices(t, 8)
	dot := lower.DotDims{LhsContracting: []int{1}, RhsContracting: []int{0}}
	run := func(typ mesh.AxisType) []*jit.Array {
		m, err := mesh.New(jit.Devices(c)[:8], []int{2, 4}, "X", "Y")
		require.NoError(t, err)
		m, err = m.WithAxisTypes(typ, typ)
		require.NoError(t, err)
		put := func(shape []int, spec mesh.PartitionSpec) *jit.Array {
			v := make([]float32, shape[0]*shape[1])
			for i := range v {
				v[i] = float32(i%7-3) / 4
			}
			a, err := jit.Put(c, v, shape, sharding(t, m, spec))
			require.NoError(t, err)
			t.Cleanup(func() { a.Close() })
			return a
		}
		x, w1, w2 := put([]int{8, 4}, mesh.P("X", nil)), put([]int{4, 16}, mesh.P(nil, "Y")), put([]int{16, 2}, mesh.P("Y", nil))
		loss := func(f *lower.Function, a []lower.Value) lower.Value {
			h := f.Tanh(f.DotGeneral(a[0], a[1], dot))
			y := f.DotGeneralOut(h, a[2], dot, lower.Out(mesh.P("X", nil)))
			if typ == mesh.Explicit {
				require.Equal(t, "float32[8@X,16@Y]", f.TypeOf(h).String())
				require.Equal(t, "float32[8@X,2]", f.TypeOf(y).String())
			}
			return f.Sum(f.Mul(y, y))
		}
		if typ == mesh.Auto {
			loss = func(f *lower.Function, a []lower.Value) lower.Value {
				y := f.DotGeneral(f.Tanh(f.DotGeneral(a[0], a[1], dot)), a[2], dot)
				return f.Sum(f.Mul(y, y))
			}
		}
		fn := jit.New("vg", jit.ValueAndGrad(loss, 1, 2))
		t.Cleanup(func() { fn.Close() })
		out, err := fn.Call(c, x, w1, w2)
		require.NoError(t, err)
		for _, o := range out {
			t.Cleanup(func() { o.Close() })
		}
		return out
	}
	auto, typed := run(mesh.Auto), run(mesh.Explicit)
	for i, want := range []mesh.PartitionSpec{mesh.P(), mesh.P(nil, "Y"), mesh.P("Y", nil)} {
		require.True(t, typed[i].Sharding().Spec().Equal(want), "result %d: %v", i, typed[i].Sharding())
		a, err := auto[i].ToHost()
		require.NoError(t, err)
		b, err := typed[i].ToHost()
		require.NoError(t, err)
		require.InDeltaSlice(t, a, b, 1e-4, "result %d", i)
	}
}
