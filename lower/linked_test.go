package lower_test

import (
	"errors"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestVJPIndependentOfLinking: with package lower linked, a module built with the builder alone
// still has no rule for its all_reduce: the error is the one package autodiff's test of the same
// name expects without lower (CollectiveVJPError there). A module lower makes has lower's rule,
// which refuses an all_reduce outside a shard_map body in its own words.
func TestVJPIndependentOfLinking(t *testing.T) {
	const want = "stablehlo: @main: stablehlo.all_reduce: vjp: not differentiable: no transpose rule for stablehlo.all_reduce"
	m := stablehlo.NewModule("m")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4))
	y := f.AllReduce(f.Mul(x, x), stablehlo.Sum, [][]int{{0, 1}})
	f.Return(autodiff.Grad(f, f.Sum(y), x)...)
	if _, err := m.Build(); !errors.Is(err, autodiff.ErrNotDifferentiable) || err.Error() != want {
		t.Errorf("builder-only module: %v\nwant %s", err, want)
	}

	lm := lower.NewModule("m")
	g := lm.Main()
	lx := g.Arg(lower.NewShape(dtypes.Float32, 4))
	ly := g.AllReduce(g.Mul(lx, lx), stablehlo.Sum, [][]int{{0, 1}})
	g.Return(autodiff.Grad(g.Function, g.Sum(ly), lx)...)
	const lowers = "lower: @main: stablehlo.all_reduce: vjp: not differentiable: stablehlo.all_reduce outside a shard_map body of package lower has no transpose rule"
	if _, err := lm.Build(); err == nil || err.Error() != lowers {
		t.Errorf("lower module: %v\nwant lower's rule: %s", err, lowers)
	}
}
