package lower_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/internal/lowertest"
	"github.com/xlamesh/xlamesh/internal/reftest"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func specs(ps ...mesh.PartitionSpec) []mesh.PartitionSpec { return ps }

// TestReplicationCheck: the out_specs of a shard_map must name every manual axis a result
// varies over, with JAX's rules for which values vary (check_vma).
func TestReplicationCheck(t *testing.T) {
	f32 := lower.NewShape(dtypes.Float32, 8, 4)
	type body = func(g *lower.Function, a []lower.Value) []lower.Value
	tests := []struct {
		name      string
		in, out   []mesh.PartitionSpec
		manual    []string
		body      body
		unchecked bool
		err       string // "" for a good program; else the error's text after "sdy.manual_computation: "
	}{
		{name: "identity out P()", in: specs(mesh.P("x")), out: specs(mesh.P()),
			body: func(g *lower.Function, a []lower.Value) []lower.Value { return a },
			err:  `out_specs imply replication the value does not have: result 0: out_specs P() implies the value is replicated over mesh axis "x", but it varies over "x"`},
		{name: "unchecked", in: specs(mesh.P("x")), out: specs(mesh.P()), unchecked: true,
			body: func(g *lower.Function, a []lower.Value) []lower.Value { return a }},
		{name: "second result, two axes", in: specs(mesh.P("x", "y")), out: specs(mesh.P("x", "y"), mesh.P()),
			body: func(g *lower.Function, a []lower.Value) []lower.Value { return []lower.Value{a[0], g.Neg(a[0])} },
			err:  `result 1: out_specs P() implies the value is replicated over mesh axes "x", "y", but it varies over "x", "y"`},
		{name: "psum removes the axis", in: specs(mesh.P("x")), out: specs(mesh.P()),
			body: func(g *lower.Function, a []lower.Value) []lower.Value { return []lower.Value{g.Psum(a[0], "x")} }},
		{name: "pmax over y keeps x", in: specs(mesh.P("x", "y")), out: specs(mesh.P("x")),
			body: func(g *lower.Function, a []lower.Value) []lower.Value { return []lower.Value{g.Pmax(a[0], "y")} }},
		{name: "elementwise union", in: specs(mesh.P("x"), mesh.P("y")), out: specs(mesh.P("x")),
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{g.Add(a[0], g.Slice(a[1], []int{0, 0}, []int{2, 4}, nil))}
			},
			err: `result 0: out_specs P('x',) implies the value is replicated over mesh axis "y"`},
		{name: "constants vary over none", in: specs(mesh.P("x")), out: specs(mesh.P()),
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{g.Add(g.Full(lower.NewShape(dtypes.Float32, 2, 4), float32(1)), g.Constant(2.0))}
			}},
		{name: "axis_index adds its axis", in: specs(mesh.P()), out: specs(mesh.P("x")),
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{g.Add(a[0], g.Convert(g.AxisIndex("y"), dtypes.Float32))}
			},
			err: `result 0: out_specs P('x',) implies the value is replicated over mesh axis "y", but it varies over "y"`},
		{name: "all_gather keeps its axis", in: specs(mesh.P("x")), out: specs(mesh.P()),
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{g.AllGatherOver(a[0], 0, "x")}
			},
			err: `varies over "x"`},
		{name: "ppermute of a replicated value varies", in: specs(mesh.P()), out: specs(mesh.P()),
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{g.Ppermute(a[0], [][2]int{{0, 1}, {1, 0}}, "y")}
			},
			err: `varies over "y"`},
		{name: "psum_scatter varies", in: specs(mesh.P()), out: specs(mesh.P()),
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{g.PsumScatter(a[0], 0, true, "x")}
			},
			err: `varies over "x"`},
		{name: "replayed psum: axes read from the replica groups", in: specs(mesh.P("x", "y")), out: specs(mesh.P(nil, "y")),
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				g.Psum(a[0], "x")
				ops := g.Ops()
				return g.Replay(ops[len(ops)-1], g.Neg(a[0]))
			}},
		{name: "replayed all_gather adds its axis", in: specs(mesh.P("x")), out: specs(mesh.P()),
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				g.AllGatherOver(a[0], 0, "x")
				ops := g.Ops()
				return g.Replay(ops[len(ops)-1], g.Neg(a[0]))
			},
			err: `varies over "x"`},
		{name: "replayed ppermute adds its axis", in: specs(mesh.P()), out: specs(mesh.P()),
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				g.Ppermute(a[0], [][2]int{{0, 1}}, "y")
				ops := g.Ops()
				return g.Replay(ops[len(ops)-1], g.Neg(a[0]))
			},
			err: `varies over "y"`},
		{name: "partial manual: auto axes are not checked", in: specs(mesh.P("x")), out: specs(mesh.P()), manual: []string{"y"},
			body: func(g *lower.Function, a []lower.Value) []lower.Value { return a }},
		{name: "value through a region", in: specs(mesh.P("x")), out: specs(mesh.P()),
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{g.Reduce(a[0], lower.Sum, 1)}
			},
			err: `varies over "x"`},
		{name: "nested: the inner result still varies over the outer axis", in: specs(mesh.P("x")), out: specs(mesh.P()), manual: []string{"x"},
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				return g.ShardMap(mesh42.Abstract(), specs(mesh.P(nil, "y")), specs(mesh.P(nil, "y")), nil,
					func(h *lower.Function, b []lower.Value) []lower.Value { return b }, a[0])
			},
			err: `result 0: out_specs P() implies the value is replicated over mesh axis "x"`},
		{name: "nested: inner check", in: specs(mesh.P("x")), out: specs(mesh.P("x")), manual: []string{"x"},
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				return g.ShardMap(mesh42.Abstract(), specs(mesh.P(nil, "y")), specs(mesh.P()), nil,
					func(h *lower.Function, b []lower.Value) []lower.Value { return b }, a[0])
			},
			err: `result 0 of the nested shard_map at op 0: out_specs P() implies the value is replicated over mesh axis "y"`},
		{name: "nested: inner psum", in: specs(mesh.P("x")), out: specs(mesh.P("x")), manual: []string{"x"},
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				return g.ShardMap(mesh42.Abstract(), specs(mesh.P(nil, "y")), specs(mesh.P()), nil,
					func(h *lower.Function, b []lower.Value) []lower.Value { return []lower.Value{h.Psum(b[0], "y")} }, a[0])
			}},
		{name: "axis_index in a partial shard_map", in: specs(mesh.P()), out: specs(mesh.P("y")), manual: []string{"y"},
			body: func(g *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{g.Add(a[0], g.Convert(g.AxisIndex("y"), dtypes.Float32))}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := lower.NewModule("check")
			f := m.Main()
			var args []lower.Value
			for range tc.in {
				args = append(args, f.Arg(f32))
			}
			sm := f.ShardMap
			if tc.unchecked {
				sm = f.ShardMapUnchecked
			}
			outs := sm(mesh42.Abstract(), tc.in, tc.out, tc.manual, tc.body, args...)
			f.Return(outs...)
			_, err := m.Build()
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, lower.ErrReplication)
			require.ErrorContains(t, err, tc.err)
			var oe *lower.OpError
			require.True(t, errors.As(err, &oe))
			require.Equal(t, "sdy.manual_computation", oe.Op)
		})
	}
}

// TestReplicationUncheckedRuns: with the check off (JAX's check_vma=False) a result whose out_spec
// P() leaves out "x" compiles and runs on lowertest.RealMesh (4x2 on 8 devices); each device
// returns its own block, so device (ix, iy) holds rows R*ix..R*ix+R-1 of the input, with R = 8/X
// rows a block (2ix, 2ix+1 on 4x2; JAX returns device 0's).
func TestReplicationUncheckedRuns(t *testing.T) {
	for _, p := range []lower.Partitioner{lower.Shardy, lower.GSPMD} {
		t.Run(p.String(), func(t *testing.T) {
			c := pjrttest.Client(t)
			rm := lowertest.RealMesh(t, c)
			m := lower.NewModule("unchecked", lower.WithPartitioner(p))
			f := m.Main()
			x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 4), mesh.MustNamedSharding(rm, mesh.P("x")))
			body := func(g *lower.Function, a []lower.Value) []lower.Value { return a }
			out := f.ShardMapUnchecked(rm.Abstract(), specs(mesh.P("x")), specs(mesh.P()), nil, body, x)
			f.Return(out...)
			f.ShardResults(mesh.MustNamedSharding(rm, mesh.P()))
			prog, err := m.Build()
			require.NoError(t, err)
			if x, y := xy(rm); x*y > 1 || p == lower.GSPMD {
				require.Contains(t, prog.Text(), "manual")
			} else {
				// On one device a Shardy shard_map is its body, in place, as JAX lowers it.
				require.NotContains(t, prog.Text(), "manual")
			}

			// The same program with the check on is an error naming the axis.
			m2 := lower.NewModule("checked", lower.WithPartitioner(p))
			f2 := m2.Main()
			x2 := f2.ShardedArg(lower.NewShape(dtypes.Float32, 8, 4), mesh.MustNamedSharding(rm, mesh.P("x")))
			f2.Return(f2.ShardMap(rm.Abstract(), specs(mesh.P("x")), specs(mesh.P()), nil, body, x2)...)
			_, err = m2.Build()
			require.ErrorIs(t, err, lower.ErrReplication)
			require.ErrorContains(t, err, `mesh axis "x"`)

			exe := lowertest.Compile(t, c, rm, prog)
			in := reftest.SmallFloats(32)
			devs := rm.Devices()
			nx, ny := xy(rm)
			k := 8 / nx * 4 // elements of a block of rows
			args := make([][]*pjrt.Buffer, len(devs))
			for i, d := range devs {
				ix := i / ny
				b, err := c.BufferFromHost(d.(*pjrt.Device), in[ix*k:ix*k+k], []int{8 / nx, 4})
				require.NoError(t, err)
				defer b.Close()
				args[i] = []*pjrt.Buffer{b}
			}
			outs, err := exe.Execute(args)
			require.NoError(t, err)
			for i := range devs {
				host, err := outs[i][0].ToHost()
				require.NoError(t, err)
				outs[i][0].Close()
				ix := i / ny
				require.Equal(t, in[ix*k:ix*k+k], host, "device %d", i)
			}
		})
	}
}

// TestAxisIndexLowering: axis_index is partition_id arithmetic as JAX lowers it, wrapped in
// a nested manual computation over the other axes in a partial shard_map.
func TestAxisIndexLowering(t *testing.T) {
	build := func(manual []string, axes ...string) string {
		m := lower.NewModule("ai")
		f := m.Main()
		out := f.ShardMap(mesh42.Abstract(), nil, specs(mesh.P(axes[0])), manual,
			func(g *lower.Function, _ []lower.Value) []lower.Value {
				return []lower.Value{g.Reshape(g.AxisIndex(axes...), 1)}
			})
		f.Return(out...)
		prog, err := m.Build()
		require.NoError(t, err)
		return prog.Text()
	}
	full := build(nil, "x")
	require.Contains(t, full, `"stablehlo.partition_id"() : () -> tensor<ui32>`)
	require.Contains(t, full, "stablehlo.constant dense<2> : tensor<ui32>") // x's stride
	require.Contains(t, full, "stablehlo.constant dense<4> : tensor<ui32>") // x's size
	partial := build([]string{"y"}, "y")
	require.Equal(t, 2, strings.Count(partial, "sdy.manual_computation"), partial)
	require.Contains(t, partial, `manual_axes={"x"}`)

	// Errors.
	m := lower.NewModule("ai")
	f := m.Main()
	f.ShardMap(mesh42.Abstract(), nil, specs(mesh.P()), []string{"y"},
		func(g *lower.Function, _ []lower.Value) []lower.Value { return []lower.Value{g.AxisIndex("x")} })
	_, err := m.Build()
	require.ErrorIs(t, err, lower.ErrNotManual)
	require.ErrorContains(t, err, `axis_index: not in a manual computation: axis "x" is not a manual axis of the enclosing shard_map`)
	m = lower.NewModule("ai")
	m.Main().AxisIndex("x")
	_, err = m.Build()
	require.ErrorIs(t, err, lower.ErrNotManual)
}

// TestPsumScatterUntiled: tiled=false needs the scatter dimension to equal the group size.
func TestPsumScatterUntiled(t *testing.T) {
	m := lower.NewModule("ps")
	f := m.Main()
	x := f.Arg(lower.NewShape(dtypes.Float32, 4, 3))
	var shape stablehlo.Shape
	f.Return(f.ShardMap(mesh42.Abstract(), specs(mesh.P()), specs(mesh.P("x")), nil,
		func(g *lower.Function, a []lower.Value) []lower.Value {
			r := g.PsumScatter(a[0], 0, false, "x")
			shape = r.Shape()
			return []lower.Value{r}
		}, x)...)
	_, err := m.Build()
	require.NoError(t, err)
	require.Equal(t, []int{3}, shape.Dims())

	m = lower.NewModule("ps")
	f = m.Main()
	x = f.Arg(lower.NewShape(dtypes.Float32, 4, 3))
	f.ShardMap(mesh42.Abstract(), specs(mesh.P()), specs(mesh.P()), nil,
		func(g *lower.Function, a []lower.Value) []lower.Value {
			return []lower.Value{g.PsumScatter(a[0], 1, false, "x")}
		}, x)
	_, err = m.Build()
	require.ErrorIs(t, err, lower.ErrShape)
	require.ErrorContains(t, err, "psum_scatter with tiled=false needs scatter dimension 1 (size 3) to equal the size 4")
}

// TestVaryingAxes: JAX's jax.typeof(v).vma, during and after building.
func TestVaryingAxes(t *testing.T) {
	m := lower.NewModule("vma")
	f := m.Main()
	x := f.Arg(lower.NewShape(dtypes.Float32, 8, 4))
	type seen struct {
		axes []string
		ok   bool
	}
	got := map[string]seen{}
	record := func(g *lower.Function, name string, v lower.Value) {
		axes, ok := g.VaryingAxes(v)
		got[name] = seen{axes, ok}
	}
	var inner, summed lower.Value
	res := f.ShardMap(mesh42.Abstract(), specs(mesh.P("x", "y")), specs(mesh.P("x", "y")), []string{"x"},
		func(g *lower.Function, a []lower.Value) []lower.Value {
			record(g, "arg", a[0])
			summed = g.Psum(a[0], "x")
			record(g, "psum", summed)
			record(g, "const", g.Full(lower.NewShape(dtypes.Float32), float32(1)))
			out := g.ShardMap(mesh42.Abstract(), specs(mesh.P(nil, "y")), specs(mesh.P(nil, "y")), nil,
				func(h *lower.Function, b []lower.Value) []lower.Value {
					record(h, "inner arg", b[0])
					inner = h.Add(b[0], h.Convert(h.AxisIndex("y"), dtypes.Float32))
					return []lower.Value{inner}
				}, a[0])
			record(g, "inner result", out[0])
			return out
		}, x)
	record(f, "outside", x)
	f.Return(res...)
	_, err := m.Build()
	require.NoError(t, err)
	require.Equal(t, map[string]seen{
		"arg": {[]string{"x"}, true}, "psum": {nil, true}, "const": {nil, true},
		"inner arg": {[]string{"x", "y"}, true}, "inner result": {[]string{"x"}, true},
		"outside": {nil, false},
	}, got)
	// After building too.
	axes, ok := f.VaryingAxes(inner)
	require.True(t, ok)
	require.Equal(t, []string{"x", "y"}, axes)
}

// TestShardMapOneDeviceInPlace: on a mesh of one device a Shardy shard_map is printed as its
// body, in place, as JAX lowers a shard_map whose manual axes all have size 1 (no
// sdy.manual_computation): XLA runs no partitioner there and could not compile one. On the
// (N, 1) mesh of the client's devices a shard_map with a psum and an axis_index over "y"
// (size 1) runs with exact results: in place on one device, a manual computation on more.
func TestShardMapOneDeviceInPlace(t *testing.T) {
	c := pjrttest.Client(t)
	n := len(c.Devices())
	rm, err := mesh.New(lowertest.Devices(c, n), []int{n, 1}, "x", "y")
	require.NoError(t, err)
	body := func(g *lower.Function, a []lower.Value) []lower.Value {
		s := g.Psum(a[0], "y")
		i := g.Psum(g.Convert(g.AxisIndex("y"), dtypes.Float32), "y")
		return []lower.Value{g.Add(g.Mul(s, g.Constant(2)), i)}
	}
	m := lower.NewModule("one_device")
	f := m.Main()
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 4), mesh.MustNamedSharding(rm, mesh.P("x")))
	f.Return(f.ShardMap(rm.Abstract(), specs(mesh.P("x")), specs(mesh.P("x")), nil, body, x)...)
	f.ShardResults(mesh.MustNamedSharding(rm, mesh.P("x")))
	prog, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, prog.Text(), "stablehlo.all_reduce")
	if n == 1 {
		require.NotContains(t, prog.Text(), "sdy.manual_computation")
	} else {
		require.Contains(t, prog.Text(), "sdy.manual_computation")
	}
	in := reftest.SmallFloats(32)
	got := lowertest.Run(t, c, rm, prog, [][]float32{in})
	want := make([]float32, len(in))
	for i, v := range in {
		want[i] = 2 * v // a psum over one device is the value; axis_index("y") is 0
	}
	require.Equal(t, [][]float32{want}, got)
}
