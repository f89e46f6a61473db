package lower_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/nn"
)

// TestReluOnExplicitMesh: nn.Relu's maximum (marked stablehlo.ReluParams for its gradient)
// takes max's sharding rule on a mesh with Explicit axes, so it builds what f.Max(x, 0)
// builds there.
func TestReluOnExplicitMesh(t *testing.T) {
	build := func(op func(f *lower.Function, x lower.Value) lower.Value) (string, string) {
		m := lower.NewModule("f")
		f := m.Main()
		x := f.ShardedArg(f32(8, 4), xsh(t, explicit24, "X", "Y"))
		r := op(f, x)
		ty := f.TypeOf(r).String()
		f.Return(r)
		p, err := m.Build()
		require.NoError(t, err)
		return ty, p.Text()
	}
	ty, text := build(func(f *lower.Function, x lower.Value) lower.Value { return nn.Relu(f.Function, x) })
	maxTy, maxText := build(func(f *lower.Function, x lower.Value) lower.Value { return f.Max(x, f.Constant(0)) })
	assert.Equal(t, "float32[8@X,4@Y]", ty)
	assert.Equal(t, maxTy, ty)
	assert.Equal(t, maxText, text)
}
