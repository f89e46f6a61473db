package lower_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/internal/lowertest"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

// The test mesh, 8 devices as x=4, y=2 (device = 2*ix + iy), and the shorthands for shardings:
// ns on mesh42, on on any mesh. lower/wrap's tests share them through lowertest.
var (
	mesh42 = lowertest.Mesh42()
	ns     = lowertest.NS
	on     = lowertest.On
)

// goldenCase is one module with a golden text per partitioner it supports.
type goldenCase struct {
	name  string
	gspmd bool // also lowered in GSPMD mode (golden <name>.gspmd.mlir)
	// build builds the case on tm: mesh42 for the golden texts, an ("x", "y") mesh whose
	// sizes divide (4, 2) in the integration tests.
	build func(m *lower.Module, tm mesh.Mesh)
}

// mustBuild is build, failing the test on an error.
func mustBuild(t *testing.T, c goldenCase, p lower.Partitioner) *lower.Program {
	t.Helper()
	prog, err := build(c, p)
	require.NoError(t, err)
	return prog
}

// build builds a case on mesh42, as its golden texts have it.
func build(c goldenCase, p lower.Partitioner) (*lower.Program, error) {
	return buildOn(c, p, mesh42)
}

// buildOn builds a case on tm, an ("x", "y") mesh whose sizes divide (4, 2): the integration
// tests build the cases on a mesh of the devices there are.
func buildOn(c goldenCase, p lower.Partitioner, tm mesh.Mesh) (*lower.Program, error) {
	m := lower.NewModule("jit_"+c.name, lower.WithPartitioner(p))
	c.build(m, tm)
	return m.Build()
}

// seed is the program of JAX's Shardy announcement: f(x) = x * 2 on 8x2, P("x", "y").
func seed(m *lower.Module, tm mesh.Mesh) {
	f := m.Main()
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 2), on(tm, "x", "y"))
	f.Return(f.Mul(x, f.Constant(2.0)))
	f.ShardResults(on(tm, "x", "y"))
}

// matmul multiplies a 16x8 by an 8x4 matrix with the given specs of a, b and the result.
func matmul(a, b, out mesh.PartitionSpec) func(m *lower.Module, tm mesh.Mesh) {
	return func(m *lower.Module, tm mesh.Mesh) {
		f := m.Main()
		x := f.ShardedArg(lower.NewShape(dtypes.Float32, 16, 8), mesh.MustNamedSharding(tm, a))
		y := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 4), mesh.MustNamedSharding(tm, b))
		f.Return(f.MatMul(x, y))
		f.ShardResults(mesh.MustNamedSharding(tm, out))
	}
}

// shardMapSum sums each 4x4 block of a 16x8 array (sharded x, y), all_reduces the partial
// sums over both axes, and returns the total replicated, plus the per-shard sums.
func shardMapSum(m *lower.Module, tm mesh.Mesh) {
	f := m.Main()
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 16, 8), on(tm, "x", "y"))
	outs := f.ShardMap(tm.Abstract(), []mesh.PartitionSpec{mesh.P("x", "y")},
		[]mesh.PartitionSpec{mesh.P(), mesh.P("x", "y")}, nil,
		func(g *lower.Function, args []lower.Value) []lower.Value {
			local := g.Sum(args[0])
			total := g.Psum(local, "x", "y")
			return []lower.Value{total, g.Reshape(local, 1, 1)}
		}, x)
	f.Return(outs...)
	f.ShardResults(on(tm), on(tm, "x", "y"))
}

// shiftPerm is the permutation of a collective_permute over an axis of size k: position i
// sends to i+1 mod k.
func shiftPerm(k int) [][2]int {
	perm := make([][2]int, k)
	for i := range perm {
		perm[i] = [2]int{i, (i + 1) % k}
	}
	return perm
}

var goldenCases = []goldenCase{
	{name: "seed", gspmd: true, build: seed},
	{name: "matmul_batch", gspmd: true, build: matmul(mesh.P("x"), mesh.P(), mesh.P("x"))},
	{name: "matmul_model", gspmd: true, build: matmul(mesh.P(), mesh.P(nil, "y"), mesh.P(nil, "y"))},
	{name: "matmul_2d", gspmd: true, build: matmul(mesh.P("x", "y"), mesh.P("y"), mesh.P("x"))},
	{name: "matmul_replicated", gspmd: true, build: matmul(mesh.P(), mesh.P(), mesh.P())},
	{name: "reduce_sharded_axis", gspmd: true, build: func(m *lower.Module, tm mesh.Mesh) {
		f := m.Main()
		x := f.ShardedArg(lower.NewShape(dtypes.Float32, 16, 8), on(tm, "x", "y"))
		f.Return(f.Sum(x, 0), f.ReduceMax(x, 1), f.ReduceMin(x))
		f.ShardResults(on(tm, "y"), on(tm, "x"), on(tm))
	}},
	{name: "constraint", gspmd: true, build: func(m *lower.Module, tm mesh.Mesh) {
		f := m.Main()
		x := f.ShardedArg(lower.NewShape(dtypes.Float32, 16, 8), on(tm, "x"))
		y := f.ShardingConstraint(f.Tanh(x), on(tm, nil, "y"))
		z := f.ShardingConstraint(f.Add(y, f.Constant(1)), on(tm, mesh.Unconstrained, "x"))
		f.Return(f.Mul(z, y))
		f.ShardResults(on(tm, "y"))
	}},
	{name: "shard_map_sum", gspmd: true, build: shardMapSum},
	// Two shard_maps and a function of the name GSPMD mode gives the first body: the bodies
	// print as @shmap_body_1 and @shmap_body_2, each with its own 0.0.
	{name: "shard_map_twice", gspmd: true, build: func(m *lower.Module, tm mesh.Mesh) {
		h := m.Func("shmap_body")
		hx := h.Arg(lower.NewShape(dtypes.Float32, 16, 8))
		h.Return(h.Neg(hx))
		f := m.Main()
		x := f.ShardedArg(lower.NewShape(dtypes.Float32, 16, 8), on(tm, "x", "y"))
		in, out := []mesh.PartitionSpec{mesh.P("x", "y")}, []mesh.PartitionSpec{mesh.P("x", "y")}
		body := func(g *lower.Function, args []lower.Value) []lower.Value {
			return []lower.Value{g.Max(args[0], g.Constant(0.0))}
		}
		y := f.ShardMap(tm.Abstract(), in, out, nil, body, x)
		z := f.ShardMap(tm.Abstract(), in, out, nil, body, f.Add(y[0], f.Constant(0.0)))
		f.Return(f.Call(h.Function, z[0])...)
		f.ShardResults(on(tm, "x", "y"))
	}},
	{name: "shard_map_partial", build: func(m *lower.Module, tm mesh.Mesh) {
		f := m.Main()
		x := f.ShardedArg(lower.NewShape(dtypes.Float32, 16, 8), on(tm, "x"))
		outs := f.ShardMap(tm.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x")},
			[]string{"x"}, func(g *lower.Function, args []lower.Value) []lower.Value {
				return []lower.Value{g.Mul(args[0], g.Constant(3))}
			}, x)
		f.Return(outs...)
		f.ShardResults(on(tm, "x"))
	}},
	{name: "collectives", gspmd: true, build: func(m *lower.Module, tm mesh.Mesh) {
		f := m.Main()
		x := f.ShardedArg(lower.NewShape(dtypes.Float32, 16, 8), on(tm, "x", "y"))
		// Unchecked: the all_gather over "y" still varies over "y" (as in JAX, which raises
		// for this out_spec unless check_vma=False), and P("x") keeps the "y"=0 blocks.
		outs := f.ShardMapUnchecked(tm.Abstract(), []mesh.PartitionSpec{mesh.P("x", "y")},
			[]mesh.PartitionSpec{mesh.P("x"), mesh.P("x", "y"), mesh.P("x", "y"), mesh.P("x", "y"), mesh.P("x", "y")}, nil,
			func(g *lower.Function, args []lower.Value) []lower.Value {
				a := args[0]                                           // 4x4
				gathered := g.AllGatherOver(a, 1, "y")                 // 4x8
				scattered := g.ReduceScatterOver(a, lower.Sum, 0, "x") // 1x4
				swapped := g.AllToAllOver(a, 0, 1, "y")                // 2x8
				// {0, 1}, {1, 2}, {2, 3}, {3, 0} on mesh42.
				shifted := g.Ppermute(a, shiftPerm(tm.Abstract().AxisSizes()[0]), "x")
				maxed := g.AllReduceOver(a, lower.Max, "y")
				return []lower.Value{gathered, scattered, swapped, shifted, maxed}
			}, x)
		f.Return(outs...)
		f.ShardResults(on(tm, "x"), on(tm, "x", "y"), on(tm, "x", "y"), on(tm, "x", "y"), on(tm, "x", "y"))
	}},
	{name: "call", gspmd: true, build: func(m *lower.Module, tm mesh.Mesh) {
		h := m.Func("scale")
		hx := h.Arg(lower.NewShape(dtypes.Float32, 8, 2))
		h.Return(h.Mul(hx, h.Constant(2)), h.Neg(hx))
		f := m.Main()
		x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 2), on(tm, "x", "y"))
		r := f.Call(h.Function, x)
		f.Return(f.Add(r[0], r[1]))
		f.ShardResults(on(tm, "x", "y"))
	}},
	{name: "entry_shardings", gspmd: true, build: func(m *lower.Module, tm mesh.Mesh) {
		f := m.Main()
		s := lower.NewShape(dtypes.Float32, 8, 8)
		a := f.ShardedArg(s, on(tm, "x", "y"))
		b := f.ShardedArg(s, on(tm, "y", "x"))
		c := f.ShardedArg(s, on(tm, "x"))
		d := f.ShardedArg(s, on(tm, "y"))
		e := f.ShardedArg(s, on(tm, mesh.Axes("x", "y")))
		g := f.ShardedArg(s, on(tm, nil, mesh.Axes("y", "x")))
		r := f.ShardedArg(lower.NewShape(dtypes.Float32), on(tm))
		sum := f.Add(f.Add(f.Add(a, b), f.Add(c, d)), f.Add(f.Add(e, g), r))
		f.Return(sum, r)
		f.ShardResults(on(tm, nil, "x"), on(tm))
	}},
	{name: "device_order", build: func(m *lower.Module, tm mesh.Mesh) {
		// Same mesh shape over the devices in another order: a second symbol with device_ids.
		// On mesh42 the devices 7, 6, ..., 0.
		rev := mesh.MustNew(lowertest.Reversed(tm.Devices()), tm.Abstract().AxisSizes(), "x", "y")
		f := m.Main()
		x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 2), on(tm, "x", "y"))
		y := f.ShardingConstraint(x, mesh.MustNamedSharding(rev, mesh.P("x")))
		f.Return(y)
		f.ShardResults(on(tm, "x", "y"))
	}},
}

func init() {
	goldenCases = append(goldenCases, goldenCase{name: "entry_defaults", gspmd: true, build: func(m *lower.Module, tm mesh.Mesh) {
		f := m.Main()
		x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 4), on(tm, "x"))
		b := f.Arg(lower.NewShape(dtypes.Float32, 4))
		y := f.Add(x, f.BroadcastInDim(b, []int{8, 4}, []int{1}))
		f.Return(y, f.Sum(y, 0))
	}})
}

func init() {
	goldenCases = append(goldenCases,
		goldenCase{name: "nested_shard_map", build: func(m *lower.Module, tm mesh.Mesh) {
			f := m.Main()
			x := f.ShardedArg(lower.NewShape(dtypes.Float32, 16, 8), on(tm, "x", "y"))
			outs := f.ShardMap(tm.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x")}, []string{"x"},
				func(g *lower.Function, args []lower.Value) []lower.Value {
					inner := g.ShardMap(tm.Abstract(), []mesh.PartitionSpec{mesh.P(nil, "y")}, []mesh.PartitionSpec{mesh.P(nil, "y")}, nil,
						func(h *lower.Function, a []lower.Value) []lower.Value {
							return []lower.Value{h.Psum(a[0], "x", "y")}
						}, args[0])
					return inner
				}, x)
			f.Return(outs...)
			f.ShardResults(on(tm, "x", "y"))
		}},
		goldenCase{name: "maximal_mesh", build: func(m *lower.Module, tm mesh.Mesh) {
			f := m.Main()
			x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 2), on(tm, "x"))
			m.MaximalMesh(0)
			f.Return(f.Neg(x))
			f.ShardResults(on(tm, "x"))
		}},
	)
}
