package jit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestNamesNeedingQuotes: a function named "my-fn" (module @"jit_my-fn") on a mesh whose axis
// names need quoting lowers, compiles and runs; a name XLA cannot carry is an error wrapping
// mlir.ErrName, returned by Call, never a crash.
func TestNamesNeedingQuotes(t *testing.T) {
	c := pjrttest.Client(t)
	m := fitMesh(t, jit.Devices(c), []int{4, 2}, `data "x"`, "model-1.y")
	s := mesh.MustNamedSharding(m, mesh.P(`data "x"`, "model-1.y"))
	in := make([]int32, 32)
	want := make([]int32, 32)
	for i := range in {
		in[i], want[i] = int32(i), 2*int32(i)
	}
	x, err := jit.Put(c, in, []int{8, 4}, s)
	require.NoError(t, err)
	defer x.Close()
	body := func(f *lower.Function, a []lower.Value) []lower.Value {
		return []lower.Value{f.Add(a[0], a[0])}
	}
	double := jit.New("my-fn", body, jit.OutSpecs(mesh.P("model-1.y", `data "x"`)))
	prog, err := double.Lower(m.Abstract(), jit.ArgType{Shape: lower.NewShape(x.DType(), 8, 4), Spec: s.Spec()})
	require.NoError(t, err)
	require.Contains(t, prog.Text(), `module @"jit_my-fn" attributes`)
	ys, err := double.Call(c, x)
	require.NoError(t, err)
	defer ys[0].Close()
	host, err := ys[0].ToHost()
	require.NoError(t, err)
	require.Equal(t, want, host)
	require.NoError(t, double.Close())

	bad := jit.New("é", body)
	_, err = bad.Call(c, x)
	require.ErrorIs(t, err, mlir.ErrName)
	require.NoError(t, bad.Close())
}
