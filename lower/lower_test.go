package lower_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

// The seed module carries exactly the pieces issue 2 names.
func TestSeedModule(t *testing.T) {
	prog := mustBuild(t, goldenCases[0], lower.Shardy)
	text := prog.Text()
	for _, want := range []string{
		`module @jit_seed attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {`,
		`  sdy.mesh @mesh = <["x"=4, "y"=2]>`,
		`%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}`,
		`-> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})`,
	} {
		require.Contains(t, text, want)
	}
	require.NotContains(t, text, "device_ids")
	require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7}, prog.DeviceAssignment())
	require.Equal(t, 8, prog.NumPartitions())
	s, ok := prog.ArgSharding(0)
	require.True(t, ok)
	require.True(t, s.Equal(ns("x", "y")))
	_, ok = prog.ArgSharding(1)
	require.False(t, ok)
}

// Lowering depends only on the abstract mesh: the same program on meshes of one shape but
// different devices gives byte-identical text; only the device assignment differs.
func TestAbstractMeshOnly(t *testing.T) {
	var rev []mesh.Device
	for i := 7; i >= 0; i-- {
		rev = append(rev, mesh.SimDevice{Id: 10 + i})
	}
	other := mesh.MustNew(rev, []int{4, 2}, "x", "y")
	abstract := mesh.MustAbstract([]int{4, 2}, []string{"x", "y"})
	lowerOn := func(spec func(entries ...any) mesh.NamedSharding) *lower.Program {
		m := lower.NewModule("f")
		f := m.Main()
		x := f.ShardedArg(lower.NewShape(dtypes.Float32, 16, 8), spec("x", "y"))
		y := f.ShardingConstraint(f.Exp(x), spec(nil, "x"))
		outs := f.ShardMap(abstract, []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P()}, nil,
			func(g *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{g.Psum(g.Sum(a[0]), "x", "y")}
			}, y)
		f.Return(outs[0], y)
		f.ShardResults(spec(), spec("x"))
		p, err := m.Build()
		require.NoError(t, err)
		return p
	}
	a := lowerOn(ns)
	b := lowerOn(func(e ...any) mesh.NamedSharding { return mesh.MustNamedSharding(other, mesh.P(e...)) })
	c := lowerOn(func(e ...any) mesh.NamedSharding {
		s, err := mesh.NewAbstractSharding(abstract, mesh.P(e...))
		require.NoError(t, err)
		return s
	})
	require.Equal(t, a.Text(), b.Text())
	require.Equal(t, a.Text(), c.Text())
	require.Equal(t, []int{17, 16, 15, 14, 13, 12, 11, 10}, b.DeviceAssignment())
	require.Nil(t, c.DeviceAssignment())
}

// lower's element type names are stablehlo's; its parse errors name lower.
func TestDTypes(t *testing.T) {
	d, err := lower.ParseDType("s32")
	require.NoError(t, err)
	require.Equal(t, dtypes.Int32, d)
	require.Equal(t, "bf16", lower.MLIRType(dtypes.BFloat16))
	d, err = lower.ParseDType("c64")
	require.NoError(t, err)
	require.Equal(t, dtypes.Complex64, d)
	_, err = lower.ParseDType("c32")
	require.EqualError(t, err, `lower: element type mismatch: unknown element type "c32"`)
	require.ErrorIs(t, err, lower.ErrDType)
}

// Independent modules build concurrently, and a built Program is shared read-only.
func TestConcurrentBuilds(t *testing.T) {
	var wg sync.WaitGroup
	texts := make([]string, 8)
	for i := range texts {
		wg.Go(func() {
			p, err := build(goldenCases[i%len(goldenCases)], lower.Shardy)
			if err == nil {
				texts[i] = p.Text()
			}
		})
	}
	wg.Wait()
	for i, text := range texts {
		require.True(t, strings.HasPrefix(text, "module @jit_"+goldenCases[i%len(goldenCases)].name))
	}
}
