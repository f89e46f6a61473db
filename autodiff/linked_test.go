package autodiff_test

import (
	"errors"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// CollectiveVJPError is the error of differentiating a builder-only module through an
// all_reduce over explicit replica groups. package lower's tests expect the very same text with
// lower linked (TestVJPIndependentOfLinking there): the rules of lower's ops travel with the
// modules lower makes, not with the binary.
const CollectiveVJPError = "stablehlo: @main: stablehlo.all_reduce: vjp: not differentiable: no transpose rule for stablehlo.all_reduce"

// TestVJPIndependentOfLinking: this test binary does not link package lower, and a builder-only
// module's all_reduce has no transpose rule.
func TestVJPIndependentOfLinking(t *testing.T) {
	m := stablehlo.NewModule("m")
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4))
	y := f.AllReduce(f.Mul(x, x), stablehlo.Sum, [][]int{{0, 1}})
	g := autodiff.Grad(f, f.Sum(y), x)
	f.Return(g...)
	_, err := m.Build()
	if !errors.Is(err, autodiff.ErrNotDifferentiable) || err.Error() != CollectiveVJPError {
		t.Errorf("Build: %v\nwant %s", err, CollectiveVJPError)
	}
}
