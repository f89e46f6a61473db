package lower_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/lower"
)

// TestBroadcastOperandTypes checks the sharding types through the broadcast_in_dim a binary
// op inserts for operands of different shapes: a kept dimension keeps its operand's
// sharding, a new or stretched one is unsharded, and the op merges them as JAX's
// broadcasting rule does (jnp.add(x, b) with x P('X', None, 'Y') and b P('Y') is
// P('X', None, 'Y')).
func TestBroadcastOperandTypes(t *testing.T) {
	m := lower.NewModule("f")
	f := m.Main()
	x := f.ShardedArg(f32(8, 4, 8), xsh(t, explicit24, "X", nil, "Y"))
	b := f.ShardedArg(f32(8), xsh(t, explicit24, "Y"))
	c := f.ShardedArg(f32(1, 8), xsh(t, explicit24, nil, "Y"))
	y := f.ShardedArg(f32(8, 8), xsh(t, explicit24, "X"))
	s := f.Add(x, b)
	assert.Equal(t, "float32[8@X,4,8@Y]", f.TypeOf(s).String())
	u := f.Mul(y, c) // c's size-1 dimension stretches unsharded
	assert.Equal(t, "float32[8@X,8@Y]", f.TypeOf(u).String())
	f.Return(s, u)
	p, err := m.Build()
	require.NoError(t, err)
	assert.Contains(t, p.Text(), `"stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 2>}> : (tensor<8xf32>) -> tensor<8x4x8xf32>`)
}

// TestBroadcastOperandTypesConflict checks that a broadcast operand sharded over an axis
// the other operand uses for another dimension is refused, as JAX refuses it. JAX names
// the rank-promoted operand f32[1,8@X]; xlamesh broadcasts it to the result's shape first,
// so its message names f32[8,8@X].
func TestBroadcastOperandTypesConflict(t *testing.T) {
	m := lower.NewModule("f")
	f := m.Main()
	x := f.ShardedArg(f32(8, 8), xsh(t, explicit24, "X"))
	b := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
	f.Return(f.Add(x, b))
	_, err := m.Build()
	require.ErrorIs(t, err, lower.ErrShardingType)
	assert.ErrorContains(t, err, "add operation with inputs: f32[8@X,8], f32[8,8@X] produces an illegally sharded result: f32[8@X,8@X]")
}
