package autodiff_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/jnp"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestGradBroadcast checks that gradients through the broadcast_in_dim a binary op inserts
// for operands of different shapes reduce back to each operand's shape.
func TestGradBroadcast(t *testing.T) {
	c := pjrttest.Client(t)
	t.Run("bias", func(t *testing.T) {
		// x = arange(24).reshape(2, 3, 4), b = [1, 2, 3, 4]:
		// jax.grad(lambda x, b: jnp.sum((x + b) * x), (0, 1)) = (2x + b, x.sum((0, 1)))
		// and x.sum((0, 1))[k] = 6k + 60.
		m := stablehlo.NewModule("g")
		f := m.Main()
		x, b := f.Arg(f32(2, 3, 4)), f.Arg(f32(4))
		g := autodiff.Grad(f, f.Sum(f.Mul(f.Add(x, b), x)), x, b)
		f.Return(g...)
		xs := make([]float32, 24)
		dx := make([]float32, 24)
		for i := range xs {
			xs[i] = float32(i)
			dx[i] = 2*float32(i) + float32(i%4+1)
		}
		got := run(t, c, m, xs, []float32{1, 2, 3, 4})
		require.Equal(t, []any{dx, []float32{60, 66, 72, 78}}, got)
		require.Equal(t, []int{4}, g[1].Shape().Dims())
	})
	t.Run("stretch_both", func(t *testing.T) {
		// jax.grad(lambda a, c: jnp.sum(a * c), (0, 1))([[1], [2], [3]], [[1, 2, 3, 4]])
		// = ([[10], [10], [10]], [[6, 6, 6, 6]])
		m := stablehlo.NewModule("g")
		f := m.Main()
		a, cc := f.Arg(f32(3, 1)), f.Arg(f32(1, 4))
		g := autodiff.Grad(f, f.Sum(f.Mul(a, cc)), a, cc)
		f.Return(g...)
		got := run(t, c, m, []float32{1, 2, 3}, []float32{1, 2, 3, 4})
		require.Equal(t, []any{[]float32{10, 10, 10}, []float32{6, 6, 6, 6}}, got)
		require.Equal(t, []int{3, 1}, g[0].Shape().Dims())
		require.Equal(t, []int{1, 4}, g[1].Shape().Dims())
	})
	t.Run("where", func(t *testing.T) {
		// jax.grad(lambda x, y: jnp.sum(jnp.where(p, x, y)), (0, 1)) with p = [[T, F, T], [F, F, T]],
		// x of shape (3,) and y of shape (2, 1): ([1, 0, 2], [[1], [2]])
		m := stablehlo.NewModule("g")
		f := m.Main()
		x, y := f.Arg(f32(3)), f.Arg(f32(2, 1))
		p := f.Array([]bool{true, false, true, false, false, true}, 2, 3)
		g := autodiff.Grad(f, f.Sum(jnp.Where(f, p, x, y)), x, y)
		f.Return(g...)
		got := run(t, c, m, []float32{1, 2, 3}, []float32{4, 5})
		require.Equal(t, []any{[]float32{1, 0, 2}, []float32{1, 2}}, got)
	})
}
