package jit_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestInSpecsUnconstrained: as jax.jit refuses UNCONSTRAINED in in_shardings ("Unconstrained
// dims are not allowed when passed to in_shardings"), Call refuses mesh.Unconstrained in
// InSpecs, and Lower in its argument types, before anything is lowered or compiled.
func TestInSpecsUnconstrained(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	x, err := jit.Put(c, arange[float32](16), []int{8, 2}, sharding(t, m, mesh.P("x", "y")))
	require.NoError(t, err)
	defer x.Close()

	for _, opts := range [][]jit.Option{
		{jit.InSpecs(mesh.P("x", mesh.Unconstrained))},
		{jit.InSpecs(mesh.P("x", mesh.Unconstrained)), jit.Reshard()},
	} {
		f := jit.New("unconstrained_in", double, opts...)
		_, err = f.Call(c, x)
		require.ErrorIs(t, err, mesh.ErrUnconstrained)
		require.ErrorContains(t, err, "jit: unconstrained_in: InSpecs: argument 0, spec P('x', UNCONSTRAINED), dim 1:")
		require.Equal(t, jit.CacheStats{}, f.Stats(), "nothing was lowered or compiled")
		require.NoError(t, f.Close())
	}

	add := jit.New("add", func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Add(a[0], a[1])}
	}, jit.InSpecs(mesh.P("x", "y"), mesh.P(mesh.Unconstrained)))
	defer add.Close()
	_, err = add.Call(c, x, x)
	require.ErrorIs(t, err, mesh.ErrUnconstrained)
	require.ErrorContains(t, err, "argument 1, spec P(UNCONSTRAINED,), dim 0")

	ok := jit.New("double", double)
	defer ok.Close()
	_, err = ok.Lower(m.Abstract(), jit.ArgType{Shape: lower.NewShape(dtypes.Float32, 8, 2), Spec: mesh.P(mesh.Unconstrained, "y")})
	require.ErrorIs(t, err, mesh.ErrUnconstrained)
	require.ErrorContains(t, err, "jit: double: lower: argument 0, spec P(UNCONSTRAINED, 'y'), dim 0:")
	require.Equal(t, jit.CacheStats{}, ok.Stats())
	_, err = ok.Lower(m.Abstract(), jit.ArgType{Shape: lower.NewShape(dtypes.Float32, 8, 2), Spec: mesh.P("x", "y")})
	require.NoError(t, err)
}
