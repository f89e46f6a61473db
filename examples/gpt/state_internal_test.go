package gpt

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/optim"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
	"github.com/xlamesh/xlamesh/tree"
)

// TestStateShardedLikeParams: after the initial state and after a step, every AdamW moment is
// laid out as its parameter (Wq split by columns over "model", Wo by rows, ...) and the counts
// are replicated: the optimizer's state stays sharded as the model is.
func TestStateShardedLikeParams(t *testing.T) {
	c := pjrttest.Client(t)
	m, err := mesh.New(jit.Devices(c)[:8], []int{2, 4}, "data", "model")
	require.NoError(t, err)
	tr, err := Tiny.NewTrainer(c, m, Text)
	require.NoError(t, err)
	defer func() { require.NoError(t, tr.Close()) }()
	opt, err := Tiny.Optimizer()
	require.NoError(t, err)
	_, vocab := Tokens(Text)
	dims, _, err := tree.Flatten[[]int](Tiny.Shapes(vocab))
	require.NoError(t, err)
	specs, d, err := tree.Flatten[mesh.PartitionSpec](Tiny.Specs())
	require.NoError(t, err)
	params := make([]shapes.Shape, len(dims))
	for i, ds := range dims {
		params[i] = shapes.Make(dtypes.Float32, ds...)
	}
	layout := opt.Layout(params)
	check := func(when string) {
		require.Len(t, tr.state, len(layout))
		sharded := 0
		for k, leaf := range layout {
			want := mesh.P()
			if leaf.Kind == optim.Like {
				want = specs[leaf.Param]
			}
			assert.Equal(t, want, tr.state[k].Sharding().Spec(), "%s: state leaf %d (%s, %s)", when, k, leaf, d.Paths()[max(leaf.Param, 0)])
			if len(want.UsedAxes()) > 0 {
				sharded++
			}
		}
		assert.Equal(t, 2*2*7, sharded, "%s: two moments of the 7 split matrices and vectors of each of 2 blocks", when)
	}
	check("initial state")
	_, err = tr.Step(0)
	require.NoError(t, err)
	check("after a step")
}
