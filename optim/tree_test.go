package optim_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/optim"
	"github.com/xlamesh/xlamesh/stablehlo"
	"github.com/xlamesh/xlamesh/tree"
)

type pair struct{ A, B stablehlo.Value }

// The tree forms refuse what is no tree of values, and gradients of another structure than
// the parameters, naming the path; after an error they build nothing and return zero trees.
func TestTreeErrors(t *testing.T) {
	cases := []struct {
		name string
		body func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value)
		want error
		msg  string
	}{
		{"grads of another structure", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			o := mustAdam(t)
			s := optim.InitTree(f, o, map[string]stablehlo.Value{"a": p[0], "b": p[1]})
			require.Len(t, s, 5)
			next, ns := optim.UpdateTree(f, o, map[string]stablehlo.Value{"a": g[0], "c": g[1]}, s, map[string]stablehlo.Value{"a": p[0], "b": p[1]})
			assert.Nil(t, next)
			assert.Nil(t, ns)
		}, tree.ErrStructure, `the gradients are map["a": *, "c": *], the parameters map["a": *, "b": *]`},
		{"updates of another structure", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			out := optim.ApplyUpdatesTree(f, []stablehlo.Value{p[0], p[1]}, []stablehlo.Value{g[0]})
			assert.Nil(t, out)
		}, tree.ErrStructure, "the updates are [*], the parameters [*, *]"},
		{"not a tree", func(t *testing.T, f *stablehlo.Function, p, _ []stablehlo.Value) {
			optim.InitTree(f, mustAdam(t), struct {
				W stablehlo.Value
				N int
			}{W: p[0]})
		}, tree.ErrNotTree, "tree: .N: a int is neither a leaf"},
		{"step after an error", func(t *testing.T, f *stablehlo.Function, p, g []stablehlo.Value) {
			optim.ApplyUpdates(f, p, nil)
			next, s := optim.StepTree(f, mustAdam(t), pair{g[0], g[1]}, nil, pair{p[0], p[1]})
			assert.Equal(t, pair{}, next)
			assert.Nil(t, s)
		}, optim.ErrLength, "0 updates for 2 parameters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := build(t, func(f *stablehlo.Function, p, g []stablehlo.Value) { tc.body(t, f, p, g) })
			require.ErrorIs(t, err, tc.want)
			assert.ErrorContains(t, err, tc.msg)
		})
	}
}

// StepTree on a struct of parameters builds what Update and ApplyUpdates build on the flat
// list of its leaves: the same ops, in the same order.
func TestStepTreeIsFlat(t *testing.T) {
	text := func(tree bool) string {
		m := stablehlo.NewModule("optim")
		f := m.Main()
		var p, g []stablehlo.Value
		for range 2 {
			p = append(p, f.Arg(stablehlo.NewShape(dtypes.Float32, 3)))
		}
		for range 2 {
			g = append(g, f.Arg(stablehlo.NewShape(dtypes.Float32, 3)))
		}
		o := mustAdam(t)
		if tree {
			s := optim.InitTree(f, o, pair{p[0], p[1]})
			next, ns := optim.StepTree(f, o, pair{g[0], g[1]}, s, pair{p[0], p[1]})
			f.Return(append([]stablehlo.Value{next.A, next.B}, ns...)...)
		} else {
			s := o.Init(f, p)
			u, ns := o.Update(f, g, s, p)
			f.Return(append(optim.ApplyUpdates(f, p, u), ns...)...)
		}
		prog, err := m.Build()
		require.NoError(t, err)
		return prog
	}
	assert.Equal(t, text(false), text(true))
}
