package lower_test

import (
	"math"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

// The test mesh: 8 devices as x=4, y=2 (device = 2*ix + iy).
var mesh42 = mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "x", "y")

// ns returns a NamedSharding on mesh42.
func ns(entries ...any) mesh.NamedSharding {
	return mesh.MustNamedSharding(mesh42, mesh.P(entries...))
}

// goldenCase is one module with a golden text per partitioner it supports.
type goldenCase struct {
	name  string
	gspmd bool // also lowered in GSPMD mode (golden <name>.gspmd.mlir)
	build func(m *lower.Module)
}

func build(c goldenCase, p lower.Partitioner) (*lower.Program, error) {
	m := lower.NewModule("jit_"+c.name, lower.WithPartitioner(p))
	c.build(m)
	return m.Build()
}

// seed is the program of JAX's Shardy announcement: f(x) = x * 2 on 8x2, P("x", "y").
func seed(m *lower.Module) {
	f := m.Main()
	x := f.Arg(lower.NewShape(dtypes.Float32, 8, 2), ns("x", "y"))
	f.Return(f.Mul(x, f.Constant(2.0)))
	f.ShardResults(ns("x", "y"))
}

// matmul multiplies a 16x8 by an 8x4 matrix with the given shardings of a, b and the result.
func matmul(a, b, out mesh.NamedSharding) func(m *lower.Module) {
	return func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 16, 8), a)
		y := f.Arg(lower.NewShape(dtypes.Float32, 8, 4), b)
		f.Return(f.MatMul(x, y))
		f.ShardResults(out)
	}
}

// shardMapSum sums each 4x4 block of a 16x8 array (sharded x, y), all_reduces the partial
// sums over both axes, and returns the total replicated, plus the per-shard sums.
func shardMapSum(m *lower.Module) {
	f := m.Main()
	x := f.Arg(lower.NewShape(dtypes.Float32, 16, 8), ns("x", "y"))
	outs := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x", "y")},
		[]mesh.PartitionSpec{mesh.P(), mesh.P("x", "y")}, nil,
		func(g *lower.Function, args []lower.Value) []lower.Value {
			local := g.Sum(args[0])
			total := g.AllReduce(local, lower.Sum, "x", "y")
			return []lower.Value{total, g.Reshape(local, 1, 1)}
		}, x)
	f.Return(outs...)
	f.ShardResults(ns(), ns("x", "y"))
}

var goldenCases = []goldenCase{
	{name: "seed", gspmd: true, build: seed},
	{name: "matmul_batch", gspmd: true, build: matmul(ns("x"), ns(), ns("x"))},
	{name: "matmul_model", gspmd: true, build: matmul(ns(), ns(nil, "y"), ns(nil, "y"))},
	{name: "matmul_2d", gspmd: true, build: matmul(ns("x", "y"), ns("y"), ns("x"))},
	{name: "matmul_replicated", gspmd: true, build: matmul(ns(), ns(), ns())},
	{name: "reduce_sharded_axis", gspmd: true, build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 16, 8), ns("x", "y"))
		f.Return(f.Sum(x, 0), f.ReduceMax(x, 1), f.ReduceMin(x))
		f.ShardResults(ns("y"), ns("x"), ns())
	}},
	{name: "constraint", gspmd: true, build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 16, 8), ns("x"))
		y := f.ShardingConstraint(f.Tanh(x), ns(nil, "y"))
		z := f.ShardingConstraint(f.Add(y, f.Constant(1)), ns(mesh.Unconstrained, "x"))
		f.Return(f.Mul(z, y))
		f.ShardResults(ns("y"))
	}},
	{name: "shard_map_sum", gspmd: true, build: shardMapSum},
	{name: "shard_map_partial", build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 16, 8), ns("x"))
		outs := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x")},
			[]string{"x"}, func(g *lower.Function, args []lower.Value) []lower.Value {
				return []lower.Value{g.Mul(args[0], g.Constant(3))}
			}, x)
		f.Return(outs...)
		f.ShardResults(ns("x"))
	}},
	{name: "collectives", gspmd: true, build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 16, 8), ns("x", "y"))
		outs := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x", "y")},
			[]mesh.PartitionSpec{mesh.P("x"), mesh.P("x", "y"), mesh.P("x", "y"), mesh.P("x", "y"), mesh.P("x", "y")}, nil,
			func(g *lower.Function, args []lower.Value) []lower.Value {
				a := args[0]                                       // 4x4
				gathered := g.AllGather(a, 1, "y")                 // 4x8
				scattered := g.ReduceScatter(a, lower.Sum, 0, "x") // 1x4
				swapped := g.AllToAll(a, 0, 1, "y")                // 2x8
				shifted := g.CollectivePermute(a, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 0}}, "x")
				maxed := g.AllReduce(a, lower.Max, "y")
				return []lower.Value{gathered, scattered, swapped, shifted, maxed}
			}, x)
		f.Return(outs...)
		f.ShardResults(ns("x"), ns("x", "y"), ns("x", "y"), ns("x", "y"), ns("x", "y"))
	}},
	{name: "unary_float", build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 4))
		y := f.Neg(f.Abs(f.Exp(f.Log(f.Sqrt(f.Rsqrt(f.Tanh(f.Logistic(f.Floor(f.Ceil(f.Sign(f.Cos(f.Sin(x)))))))))))))
		f.Return(y)
	}},
	{name: "unary_int", build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Int32, 4))
		p := f.Arg(lower.NewShape(dtypes.Bool, 4))
		f.Return(f.Not(f.Sign(f.Abs(f.Neg(x)))), f.Not(p))
	}},
	{name: "binary", build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 2, 3))
		y := f.Arg(lower.NewShape(dtypes.Float32, 2, 3))
		s := f.Arg(lower.NewShape(dtypes.Float32))
		r := f.Add(x, y)
		r = f.Sub(r, y)
		r = f.Mul(r, s)
		r = f.Div(r, f.Constant(2))
		r = f.Rem(r, y)
		r = f.Max(r, f.Min(x, y))
		r = f.Pow(r, f.Constant(2.0))
		f.Return(r)
	}},
	{name: "bitwise", build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Uint8, 4))
		y := f.Arg(lower.NewShape(dtypes.Uint8, 4))
		p := f.Arg(lower.NewShape(dtypes.Bool, 4))
		q := f.Arg(lower.NewShape(dtypes.Bool, 4))
		f.Return(f.Xor(f.And(x, y), f.Or(x, f.Constant(1))), f.Or(f.And(p, q), f.Xor(p, f.Constant(true))))
	}},
	{name: "compare_select", build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 4))
		i := f.Arg(lower.NewShape(dtypes.Int64, 4))
		u := f.Arg(lower.NewShape(dtypes.Uint32, 4))
		out := f.Select(f.Less(x, f.Constant(0.5)), x, f.Constant(0))
		var preds []lower.Value
		for _, d := range []lower.Comparison{lower.EQ, lower.NE, lower.LT, lower.LE, lower.GT, lower.GE} {
			preds = append(preds, f.Compare(i, f.Constant(3), d))
		}
		preds = append(preds, f.Greater(u, f.Constant(1)), f.Equal(x, x))
		f.Return(append([]lower.Value{out, f.Select(f.Constant(true), i, i)}, preds...)...)
	}},
	{name: "convert_constants", build: func(m *lower.Module) {
		f := m.Main()
		var outs []lower.Value
		for _, d := range []lower.DType{dtypes.Bool, dtypes.Int8, dtypes.Int16, dtypes.Int32, dtypes.Int64, dtypes.Uint8, dtypes.Uint16,
			dtypes.Uint32, dtypes.Uint64, dtypes.Float16, dtypes.BFloat16, dtypes.Float32, dtypes.Float64} {
			var c lower.Value
			if d == dtypes.Bool {
				c = f.Array([]bool{false, true, false, true}, 2, 2)
			} else {
				c = f.ArrayOf(d, []int{0, 1, 0, 1}, 2, 2)
			}
			outs = append(outs, f.Convert(c, dtypes.Float32))
		}
		outs = append(outs,
			f.Constant(float32(1.5)), f.ConstantOf(dtypes.Float64, 1e300), f.ConstantOf(dtypes.BFloat16, 0.1),
			f.Full(lower.NewShape(dtypes.Float32, 2), float32(math.Copysign(0, -1))), f.Array([]float32{1, 2.5, -3e-7}, 3),
			f.ConstantOf(dtypes.Float32, float32(3.4e38)), f.ConstantOf(dtypes.Int64, -9223372036854775808),
			f.ConstantOf(dtypes.Uint64, uint64(18446744073709551615)), f.Array([]int32{1, 2, 3, 4, 5, 6}, 2, 3),
			f.Convert(f.Constant(7), dtypes.Uint16))
		f.Return(outs...)
	}},
	{name: "special_floats", build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 3))
		f.Return(f.ReduceMax(x), f.ReduceMin(f.Convert(x, dtypes.Float16)), f.ReduceMax(f.Convert(x, dtypes.BFloat16)),
			f.ReduceMin(f.Convert(x, dtypes.Float64)), f.ReduceMax(f.Convert(x, dtypes.Int8)), f.ReduceMin(f.Convert(x, dtypes.Uint32)))
	}},
	{name: "iota", build: func(m *lower.Module) {
		f := m.Main()
		f.Return(f.Iota(lower.NewShape(dtypes.Int32, 4, 3), 1), f.Iota(lower.NewShape(dtypes.Float32, 5), 0))
	}},
	{name: "shape_ops", build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 2, 3))
		b := f.BroadcastInDim(x, []int{4, 2, 3}, []int{1, 2})
		c := f.BroadcastTo(f.Reshape(x, 3, 2), 5, 3, 2)
		t := f.Transpose(b, 2, 0, 1)
		f.Return(b, c, t, f.Reshape(t, 24))
	}},
	{name: "slice_ops", build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 6, 4))
		i := f.Arg(lower.NewShape(dtypes.Int32))
		s := f.Slice(x, []int{1, 0}, []int{5, 4}, []int{2, 3})
		d := f.DynamicSlice(x, []lower.Value{i, f.ConstantOf(dtypes.Int32, 1)}, []int{2, 2})
		u := f.DynamicUpdateSlice(x, d, []lower.Value{f.ConstantOf(dtypes.Int32, 0), i})
		f.Return(s, d, u)
	}},
	{name: "concat_pad", build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 2, 3))
		y := f.Arg(lower.NewShape(dtypes.Float32, 1, 3))
		c := f.Concatenate(0, x, y, x)
		p := f.Pad(x, f.Constant(0), []int{1, 0}, []int{0, 2}, []int{1, 0})
		f.Return(c, p, f.Pad(c, f.ConstantOf(dtypes.Float32, -1), []int{-1, 1}, []int{0, 0}, nil))
	}},
	{name: "dot_general", build: func(m *lower.Module) {
		f := m.Main()
		a := f.Arg(lower.NewShape(dtypes.Float32, 3, 2, 5))
		b := f.Arg(lower.NewShape(dtypes.Float32, 3, 5, 4))
		f.Return(f.DotGeneral(a, b, lower.DotDims{LhsBatch: []int{0}, RhsBatch: []int{0}, LhsContracting: []int{2}, RhsContracting: []int{1}}),
			f.DotGeneral(a, b, lower.DotDims{}))
	}},
	{name: "reduce", build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Int32, 2, 3, 4))
		f.Return(f.Reduce(x, lower.Sum, 2, 0), f.Reduce(x, lower.Prod, 1), f.ReduceMax(x, 0), f.ReduceMin(x))
	}},
	{name: "call", gspmd: true, build: func(m *lower.Module) {
		h := m.Func("scale")
		hx := h.Arg(lower.NewShape(dtypes.Float32, 8, 2))
		h.Return(h.Mul(hx, h.Constant(2)), h.Neg(hx))
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 8, 2), ns("x", "y"))
		r := f.Call(h, x)
		f.Return(f.Add(r[0], r[1]))
		f.ShardResults(ns("x", "y"))
	}},
	{name: "entry_shardings", gspmd: true, build: func(m *lower.Module) {
		f := m.Main()
		s := lower.NewShape(dtypes.Float32, 8, 8)
		a := f.Arg(s, ns("x", "y"))
		b := f.Arg(s, ns("y", "x"))
		c := f.Arg(s, ns("x"))
		d := f.Arg(s, ns("y"))
		e := f.Arg(s, ns(mesh.Axes("x", "y")))
		g := f.Arg(s, ns(nil, mesh.Axes("y", "x")))
		r := f.Arg(lower.NewShape(dtypes.Float32), ns())
		sum := f.Add(f.Add(f.Add(a, b), f.Add(c, d)), f.Add(f.Add(e, g), r))
		f.Return(sum, r)
		f.ShardResults(ns(nil, "x"), ns())
	}},
	{name: "device_order", build: func(m *lower.Module) {
		// Same mesh shape over the devices in another order: a second symbol with device_ids.
		rev := mesh.MustNew([]mesh.Device{mesh.SimDevice{Id: 7}, mesh.SimDevice{Id: 6}, mesh.SimDevice{Id: 5}, mesh.SimDevice{Id: 4},
			mesh.SimDevice{Id: 3}, mesh.SimDevice{Id: 2}, mesh.SimDevice{Id: 1}, mesh.SimDevice{Id: 0}}, []int{4, 2}, "x", "y")
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 8, 2), ns("x", "y"))
		y := f.ShardingConstraint(x, mesh.MustNamedSharding(rev, mesh.P("x")))
		f.Return(y)
		f.ShardResults(ns("x", "y"))
	}},
}

func init() {
	goldenCases = append(goldenCases, goldenCase{name: "entry_defaults", gspmd: true, build: func(m *lower.Module) {
		f := m.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 8, 4), ns("x"))
		b := f.Arg(lower.NewShape(dtypes.Float32, 4))
		y := f.Add(x, f.BroadcastInDim(b, []int{8, 4}, []int{1}))
		f.Return(y, f.Sum(y, 0))
	}})
}

func init() {
	goldenCases = append(goldenCases,
		goldenCase{name: "nested_shard_map", build: func(m *lower.Module) {
			f := m.Main()
			x := f.Arg(lower.NewShape(dtypes.Float32, 16, 8), ns("x", "y"))
			outs := f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x")}, []string{"x"},
				func(g *lower.Function, args []lower.Value) []lower.Value {
					inner := g.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P(nil, "y")}, []mesh.PartitionSpec{mesh.P(nil, "y")}, nil,
						func(h *lower.Function, a []lower.Value) []lower.Value {
							return []lower.Value{h.AllReduce(a[0], lower.Sum, "x", "y")}
						}, args[0])
					return inner
				}, x)
			f.Return(outs...)
			f.ShardResults(ns("x", "y"))
		}},
		goldenCase{name: "maximal_mesh", build: func(m *lower.Module) {
			f := m.Main()
			x := f.Arg(lower.NewShape(dtypes.Float32, 8, 2), ns("x"))
			m.MaximalMesh(0)
			f.Return(f.Neg(x))
			f.ShardResults(ns("x"))
		}},
	)
}
