package lower_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

// untiled builds one shard_map over the 4x2 mesh (all axes manual) of an f32 argument of
// the given block shape (replicated), applies op in the body and returns the op's result
// shape, the axes it varies over and the build error.
func untiled(t *testing.T, dims []int, op func(g *lower.Function, x lower.Value) lower.Value) ([]int, []string, error) {
	t.Helper()
	m := lower.NewModule("untiled")
	f := m.Main()
	x := f.Arg(lower.NewShape(dtypes.Float32, dims...))
	var shape []int
	var vary []string
	f.Return(f.ShardMapUnchecked(mesh42.Abstract(), specs(mesh.P()), specs(mesh.P()), nil,
		func(g *lower.Function, a []lower.Value) []lower.Value {
			r := op(g, a[0])
			if r.Valid() {
				shape = r.Shape().Dims()
				vary, _ = g.VaryingAxes(r)
			}
			return []lower.Value{r}
		}, x)...)
	_, err := m.Build()
	return shape, vary, err
}

// TestAllGatherUntiled: JAX's all_gather with tiled=False inserts a dimension of the
// group's size at the position given, from 0 to the rank.
func TestAllGatherUntiled(t *testing.T) {
	for _, c := range []struct {
		dim  int
		axes []string
		want []int
	}{
		{0, []string{"x"}, []int{4, 2, 3}},
		{1, []string{"y"}, []int{2, 2, 3}},
		{2, []string{"x", "y"}, []int{2, 3, 8}},
	} {
		got, vary, err := untiled(t, []int{2, 3}, func(g *lower.Function, x lower.Value) lower.Value {
			return g.AllGatherUntiled(x, c.dim, c.axes...)
		})
		require.NoError(t, err)
		require.Equal(t, c.want, got, "dim %d over %q", c.dim, c.axes)
		require.ElementsMatch(t, c.axes, vary)
	}
	for _, c := range []struct {
		dim  int
		axes []string
		is   error
		msg  string
	}{
		{3, []string{"x"}, lower.ErrShape, `all_gather with tiled=false over axes ["x"]: new dimension 3 out of range [0, 2]`},
		{-1, []string{"x"}, lower.ErrShape, "new dimension -1 out of range"},
		{0, []string{"z"}, lower.ErrUnknownAxis, `unknown axis "z"`},
		{0, nil, lower.ErrNotManual, "no axis names given"},
	} {
		_, _, err := untiled(t, []int{2, 3}, func(g *lower.Function, x lower.Value) lower.Value {
			return g.AllGatherUntiled(x, c.dim, c.axes...)
		})
		require.ErrorIs(t, err, c.is)
		require.ErrorContains(t, err, c.msg)
	}
	m := lower.NewModule("outside")
	f := m.Main()
	f.Return(f.AllGatherUntiled(f.Arg(lower.NewShape(dtypes.Float32, 2)), 0, "x"))
	_, err := m.Build()
	require.ErrorIs(t, err, lower.ErrNotManual)
}

// TestAllToAllUntiled: JAX's all_to_all with tiled=False removes the split dimension,
// whose size must be the group's, and inserts the group's size at the concat position.
func TestAllToAllUntiled(t *testing.T) {
	for _, c := range []struct {
		dims          []int
		split, concat int
		axes          []string
		want          []int
	}{
		{[]int{4, 3}, 0, 1, []string{"x"}, []int{3, 4}},
		{[]int{3, 4, 5}, 1, 0, []string{"x"}, []int{4, 3, 5}},
		{[]int{8, 5}, 0, 0, []string{"x", "y"}, []int{8, 5}},
		{[]int{3, 2, 5}, 1, 2, []string{"y"}, []int{3, 5, 2}},
		{[]int{3, 5, 2}, 2, 0, []string{"y"}, []int{2, 3, 5}},
	} {
		got, vary, err := untiled(t, c.dims, func(g *lower.Function, x lower.Value) lower.Value {
			return g.AllToAllUntiled(x, c.split, c.concat, c.axes...)
		})
		require.NoError(t, err)
		require.Equal(t, c.want, got, "%v split %d concat %d over %q", c.dims, c.split, c.concat, c.axes)
		require.ElementsMatch(t, c.axes, vary)
	}
	for _, c := range []struct {
		dims          []int
		split, concat int
		axes          []string
		is            error
		msg           string
	}{
		{[]int{3, 4}, 0, 1, []string{"x"}, lower.ErrShape, `all_to_all with tiled=false needs split dimension 0 (size 3) to equal the size 4 of axes ["x"]`},
		{[]int{4, 3}, 2, 0, []string{"x"}, lower.ErrShape, "split dimension 2 out of range"},
		{[]int{4, 3}, 0, 2, []string{"x"}, lower.ErrShape, "concat dimension 2 out of range [0, 1]"},
		{[]int{4, 3}, 0, -1, []string{"x"}, lower.ErrShape, "concat dimension -1 out of range"},
		{[]int{}, 0, 0, []string{"x"}, lower.ErrShape, "split dimension 0 out of range"},
		{[]int{4, 3}, 0, 1, []string{"x", "x"}, lower.ErrNotManual, `axis "x" named twice`},
	} {
		_, _, err := untiled(t, c.dims, func(g *lower.Function, x lower.Value) lower.Value {
			return g.AllToAllUntiled(x, c.split, c.concat, c.axes...)
		})
		require.ErrorIs(t, err, c.is)
		require.ErrorContains(t, err, c.msg)
	}
}
