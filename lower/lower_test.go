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
		x := f.Arg(lower.NewShape(dtypes.Float32, 16, 8), spec("x", "y"))
		y := f.ShardingConstraint(f.Exp(x), spec(nil, "x"))
		outs := f.ShardMap(abstract, []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P()}, nil,
			func(g *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{g.AllReduce(g.Sum(a[0]), lower.Sum, "x", "y")}
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

func TestDTypes(t *testing.T) {
	tests := []struct {
		d         lower.DType
		xla, mlir string
	}{
		{dtypes.Bool, "pred", "i1"}, {dtypes.Int8, "s8", "i8"}, {dtypes.Int16, "s16", "i16"},
		{dtypes.Int32, "s32", "i32"}, {dtypes.Int64, "s64", "i64"}, {dtypes.Uint8, "u8", "ui8"},
		{dtypes.Uint16, "u16", "ui16"}, {dtypes.Uint32, "u32", "ui32"}, {dtypes.Uint64, "u64", "ui64"},
		{dtypes.Float16, "f16", "f16"}, {dtypes.BFloat16, "bf16", "bf16"}, {dtypes.Float32, "f32", "f32"},
		{dtypes.Float64, "f64", "f64"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.mlir, lower.MLIRType(tc.d))
		require.Equal(t, "tensor<"+tc.mlir+">", lower.NewShape(tc.d).String())
		for _, s := range []string{tc.xla, tc.mlir} {
			d, err := lower.ParseDType(s)
			require.NoError(t, err)
			require.Equal(t, tc.d, d)
		}
	}
	for _, d := range []lower.DType{dtypes.InvalidDType, dtypes.Complex64, dtypes.F8E4M3FN, lower.DType(99)} {
		require.Equal(t, "invalid", lower.MLIRType(d), "%v is not a lower element type", d)
	}
	for _, name := range []string{"c64", "float32", "Float32", "i4", ""} {
		_, err := lower.ParseDType(name)
		require.EqualError(t, err, `lower: element type mismatch: unknown element type "`+name+`"`)
		require.ErrorIs(t, err, lower.ErrDType)
	}
	s := lower.NewShape(dtypes.BFloat16, 2, 3)
	require.Equal(t, "tensor<2x3xbf16>", s.String())
	require.Equal(t, 6, s.Size())
	require.Equal(t, "tensor<i1>", lower.NewShape(dtypes.Bool).String())
	dims := s.Dims()
	dims[0] = 99
	require.Equal(t, []int{2, 3}, s.Dims(), "Dims returns a copy")
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

func TestSymbolQuoting(t *testing.T) {
	m := lower.NewModule("my module")
	h := m.Func("helper.v2")
	h.Return(h.Arg(lower.NewShape(dtypes.Float32)))
	f := m.Main()
	f.Return(f.Call(h, f.Arg(lower.NewShape(dtypes.Float32)))...)
	p, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, p.Text(), `module @"my module" attributes`)
	require.Contains(t, p.Text(), `func.func private @helper.v2(`)
	require.Contains(t, p.Text(), `func.call @helper.v2(%arg0)`)
}
