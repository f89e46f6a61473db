package jit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestCallManyArguments calls a sum of 40 arguments on 8 devices with two arrays, each passed
// at many places: each array is locked once per call, the sum is exact, and both arrays close
// afterwards (no lock left behind).
func TestCallManyArguments(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	s := sharding(t, mesh42(t, c), mesh.P("x"))
	x, err := jit.Put(c, arange[float32](16), []int{8, 2}, s)
	require.NoError(t, err)
	y, err := jit.Put(c, doubled[float32](16), []int{8, 2}, s)
	require.NoError(t, err)
	sum := jit.New("sum40", func(f *lower.Function, a []lower.Value) []lower.Value {
		acc := a[0]
		for _, v := range a[1:] {
			acc = f.Add(acc, v)
		}
		return []lower.Value{acc}
	})
	defer sum.Close()
	args := make([]*jit.Array, 40)
	for i := range args {
		args[i] = x
		if i%4 == 3 {
			args[i] = y
		}
	}
	got := callToHost(t, sum, c, args...) // 30 x + 10 * 2x = 50x
	want := arange[float32](16)
	for i := range want {
		want[i] *= 50
	}
	assert.Equal(t, want, got)
	require.NoError(t, x.Close())
	require.NoError(t, y.Close())
}
