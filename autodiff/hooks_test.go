package autodiff_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// A module's own contribution function (ContributionKey) sees every contribution, and the
// ops a transpose rule adds are built while Transposing reports true.
func TestModuleContributionAndTransposing(t *testing.T) {
	m := stablehlo.NewModule("f")
	var during, outside []string
	m.SetOpHook(func(f *stablehlo.Function, o *stablehlo.Op) []stablehlo.Value {
		if autodiff.Transposing(f) {
			during = append(during, o.Name())
		} else {
			outside = append(outside, o.Name())
		}
		return nil
	})
	var seen []string
	m.SetContext(autodiff.ContributionKey{}, func(b *autodiff.Backward, primal, ct autodiff.Value, from *stablehlo.Op) autodiff.Value {
		seen = append(seen, from.Name())
		return b.Function().Mul(ct, b.Function().Constant(float32(2))) // doubles every contribution
	})
	f := m.Main()
	x := f.Arg(stablehlo.NewShape(dtypes.Float32, 3))
	y := f.Exp(x)
	outside = nil
	g := autodiff.Grad(f, f.Sum(y), x)[0]
	f.Return(g)
	_, err := m.Build()
	require.NoError(t, err)
	require.Equal(t, []string{"stablehlo.reduce", "stablehlo.exponential"}, seen, "one contribution per transposed op")
	require.Contains(t, during, "stablehlo.multiply", "the exp rule's product is built while transposing")
	require.NotContains(t, outside, "stablehlo.exponential")
	require.False(t, autodiff.Transposing(f), "no rule runs now")
	require.False(t, autodiff.Transposing(nil))
}
