package lower_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// The rules themselves are checked against JAX by the oracle group "explicit"
// (internal/oracletest); these tests pin the API around them.

var (
	explicit24 = withTypes(mesh.MustNew(mesh.SimDevices(8), []int{2, 4}, "X", "Y"), mesh.Explicit, mesh.Explicit)
	mixed24    = withTypes(mesh.MustNew(mesh.SimDevices(8), []int{2, 4}, "X", "Y"), mesh.Explicit, mesh.Auto)
)

func withTypes(m mesh.Mesh, types ...mesh.AxisType) mesh.Mesh {
	r, err := m.WithAxisTypes(types...)
	if err != nil {
		panic(err)
	}
	return r
}

func xsh(t *testing.T, m mesh.Mesh, entries ...any) mesh.NamedSharding {
	t.Helper()
	s, err := mesh.NewNamedSharding(m, mesh.P(entries...))
	require.NoError(t, err)
	return s
}

func f32(dims ...int) lower.Shape { return lower.NewShape(dtypes.Float32, dims...) }

func TestTypeOfWithoutExplicitAxes(t *testing.T) {
	m := lower.NewModule("f")
	f := m.Main()
	x := f.ShardedArg(f32(8, 4), ns("x"))
	ty := f.TypeOf(f.Neg(x))
	assert.False(t, ty.Typed())
	assert.Equal(t, "float32[8,4]", ty.String())
	assert.Equal(t, 0, ty.Spec().Len())
	// AutoAxes on a mesh without Explicit axes just runs its body, as JAX's auto_axes does.
	r := f.AutoAxes(nil, []mesh.NamedSharding{ns("x")}, func(a []lower.Value) []lower.Value { return []lower.Value{f.Neg(a[0])} }, x)
	require.Len(t, r, 1)
	f.Return(r[0])
	p, err := m.Build()
	require.NoError(t, err)
	assert.NotContains(t, p.Text(), "sdy.sharding_constraint", "an Auto mesh builds as before")
}

func TestTypeAccessors(t *testing.T) {
	m := lower.NewModule("f")
	f := m.Main()
	x := f.ShardedArg(f32(8, 4), xsh(t, explicit24, nil, "X"))
	y := f.ShardedArg(f32(4, 16), xsh(t, explicit24, "X"))
	p := f.DotGeneralOut(x, y, lower.DotDims{LhsContracting: []int{1}, RhsContracting: []int{0}}, lower.Out(mesh.P("Y"), "X"))
	ty := f.TypeOf(p)
	assert.True(t, ty.Typed())
	assert.Equal(t, "float32[8@Y,16]{U:X}", ty.String())
	assert.Equal(t, []string{"X"}, ty.Unreduced())
	assert.True(t, ty.Spec().Equal(mesh.P("Y", nil)), ty.Spec().String())
	assert.True(t, ty.Mesh().Equal(explicit24.Abstract()))
	assert.True(t, ty.Shape().Equal(f32(8, 16)))
	s, err := ty.Sharding()
	require.NoError(t, err)
	assert.True(t, s.Spec().Equal(mesh.P("Y", nil)))
	r := f.Reshard(p, xsh(t, explicit24, ([]string{"X", "Y"})))
	assert.Equal(t, "float32[8@(X,Y),16]", f.TypeOf(r).String())
	f.Return(r)
	prog, err := m.Build()
	require.NoError(t, err)
	assert.Contains(t, prog.Text(), `sdy.sharding_constraint %0 <@mesh, [{"Y"}, {}], unreduced={"X"}> : tensor<8x16xf32>`)
	assert.Contains(t, prog.Text(), `-> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X", "Y"}, {}]>})`)
	rs, ok := prog.ResultSharding(0)
	require.True(t, ok)
	_, err = rs.Mesh()
	assert.NoError(t, err, "the result's sharding is over the arguments' devices")
}

// A program without arguments takes its mesh from WithMesh, as JAX's set_mesh.
func TestWithMeshNoArguments(t *testing.T) {
	m := lower.NewModule("iota", lower.WithMesh(explicit24.Abstract()))
	f := m.Main()
	v := f.IotaOut(lower.NewShape(dtypes.Int32, 8, 4), 0, lower.Out(mesh.P("X", "Y")))
	assert.Equal(t, "int32[8@X,4@Y]", f.TypeOf(v).String())
	w := f.Iota(lower.NewShape(dtypes.Int32, 8), 0)
	assert.Equal(t, "int32[8]", f.TypeOf(w).String())
	f.Return(v)
	p, err := m.Build()
	require.NoError(t, err)
	assert.Contains(t, p.Text(), `sdy.sharding_constraint %0 <@mesh, [{"X"}, {"Y"}]> : tensor<8x4xi32>`)
	assert.Equal(t, 8, p.NumPartitions())
}

func TestGSPMDChecksTypesWithoutConstraints(t *testing.T) {
	m := lower.NewModule("f", lower.WithPartitioner(lower.GSPMD))
	f := m.Main()
	x := f.ShardedArg(f32(8, 4), xsh(t, explicit24, "X"))
	n := f.Neg(x)
	assert.Equal(t, "float32[8@X,4]", f.TypeOf(n).String())
	f.Return(n)
	p, err := m.Build()
	require.NoError(t, err)
	assert.NotContains(t, p.Text(), "Sharding")
}

func TestMixedMeshConstraintMergesExplicitAxes(t *testing.T) {
	m := lower.NewModule("f")
	f := m.Main()
	x := f.ShardedArg(f32(8, 4), xsh(t, mixed24, "X"))
	c := f.ShardingConstraint(x, xsh(t, mixed24, nil, "Y"))
	assert.Equal(t, "float32[8@X,4]", f.TypeOf(c).String())
	f.Return(c)
	f.ShardResults(xsh(t, mixed24))
	p, err := m.Build()
	require.NoError(t, err)
	assert.Contains(t, p.Text(), `sdy.sharding_constraint %arg0 <@mesh, [{"X"}, {"Y"}]>`)
}

func TestTypedErrors(t *testing.T) {
	dot := lower.DotDims{LhsContracting: []int{1}, RhsContracting: []int{0}}
	other := withTypes(mesh.MustNew(mesh.SimDevices(8), []int{4, 2}, "X", "Y"), mesh.Explicit, mesh.Explicit)
	tests := []struct {
		name     string
		opts     []lower.Option
		build    func(f *lower.Function)
		sentinel []error
		msg      string // a part of the error
	}{
		{"reshard without explicit axes", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), ns("x"))
			f.Return(f.Reshard(x, ns("x")))
		}, []error{lower.ErrSharding}, "reshard: operand 0 (%arg0): invalid sharding: Reshard needs a mesh with Explicit axes"},
		{"reshard to None", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
			f.Return(f.Reshard(x, mesh.NamedSharding{}))
		}, []error{lower.ErrShardingType}, "Reshard should only be used with out_shardings which are non-None and have a non-empty mesh. Got sharding None"},
		{"reshard to another mesh", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
			f.Return(f.Reshard(x, xsh(t, other, "X")))
		}, []error{lower.ErrMeshMismatch}, "is not the module's mesh"},
		{"reshard indivisible", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(6), xsh(t, explicit24))
			f.Return(f.Reshard(x, xsh(t, explicit24, "Y")))
		}, []error{lower.ErrSharding}, "reshard"},
		{"out sharding without explicit axes", nil, func(f *lower.Function) {
			x := f.Arg(f32(8, 4))
			f.Return(f.DotGeneralOut(x, f.Transpose(x, 1, 0), dot, lower.Out(mesh.P())))
		}, []error{lower.ErrSharding}, "an out sharding needs a mesh with Explicit axes"},
		{"full with an out sharding, no explicit axes", nil, func(f *lower.Function) {
			f.Return(f.FullOut(f32(8), float32(0), lower.Out(mesh.P("x"))))
		}, []error{lower.ErrSharding}, "an out sharding needs a mesh with Explicit axes"},
		{"full with an indivisible out sharding", []lower.Option{lower.WithMesh(explicit24.Abstract())}, func(f *lower.Function) {
			f.Return(f.FullOut(f32(6), float32(0), lower.Out(mesh.P("Y"))))
		}, []error{lower.ErrIndivisible}, "full"},
		{"out sharding over an unknown axis", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
			f.Return(f.ReshapeOut(x, lower.Out(mesh.P("Z")), 2, 4))
		}, []error{lower.ErrUnknownAxis}, `axis "Z" is not an axis of the mesh`},
		{"out sharding indivisible", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
			f.Return(f.ReshapeOut(x, lower.Out(mesh.P(nil, "Y")), 4, 2))
		}, []error{lower.ErrIndivisible}, "reshape"},
		{"unreduced on an op without a partial sum", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
			f.Return(f.ReshapeOut(x, lower.Out(mesh.P("X"), "Y"), 2, 4))
		}, []error{lower.ErrShardingType}, "unreduced/reduced rule for reshape is not implemented"},
		{"op without a rule", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
			f.Return(f.BitcastConvert(x, dtypes.Uint16))
		}, []error{lower.ErrShardingType}, "bitcast_convert: sharding type error: sharding rule for bitcast_convert is not implemented"},
		{"scatter on a sharded dimension", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
			i := f.Arg(lower.NewShape(dtypes.Int32, 2))
			f.Return(f.ScatterAdd(x, i, f.Arg(f32(2))))
		}, []error{lower.ErrShardingType}, "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec"},
		{"gather on a sharded dimension", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
			i := f.Arg(lower.NewShape(dtypes.Int32, 2))
			f.Return(f.Take(x, i, 0))
		}, []error{lower.ErrShardingType}, "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec"},
		{"auto axes: unknown axis", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
			f.Return(f.AutoAxes([]string{"Z"}, []mesh.NamedSharding{xsh(t, explicit24)}, func(a []lower.Value) []lower.Value { return a }, x)...)
		}, []error{lower.ErrUnknownAxis}, `axis "Z" is not an axis of the mesh`},
		{"auto axes: a Manual axis", nil, func(f *lower.Function) {
			m := withTypes(mesh.MustNew(mesh.SimDevices(8), []int{2, 4}, "X", "Y"), mesh.Explicit, mesh.Manual)
			x := f.ShardedArg(f32(8), xsh(t, m, "X"))
			f.Return(f.AutoAxes([]string{"Y"}, []mesh.NamedSharding{xsh(t, m)}, func(a []lower.Value) []lower.Value { return a }, x)...)
		}, []error{lower.ErrShardingType}, "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not allowed"},
		{"auto axes: out shardings for another count", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
			f.Return(f.AutoAxes(nil, []mesh.NamedSharding{xsh(t, explicit24), xsh(t, explicit24)}, func(a []lower.Value) []lower.Value { return a }, x)...)
		}, []error{lower.ErrSharding}, "2 out shardings for 1 results"},
		{"explicit axes: in shardings for another count", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), ns("x"))
			f.Return(f.ExplicitAxes(nil, []mesh.NamedSharding{}, func(a []lower.Value) []lower.Value { return a }, x)...)
		}, []error{lower.ErrSharding}, "0 in shardings for 1 arguments"},
		{"explicit axes: no in shardings", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), ns("x"))
			f.Return(f.ExplicitAxes(nil, nil, func(a []lower.Value) []lower.Value { return a }, x)...)
		}, []error{lower.ErrShardingType}, "Missing required keyword argument: 'in_sharding'"},
		{"auto axes: no body", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), xsh(t, explicit24, "X"))
			f.Return(f.AutoAxes(nil, []mesh.NamedSharding{xsh(t, explicit24)}, nil, x)...)
		}, []error{lower.ErrFunction}, "auto_axes needs a body"},
		{"explicit axes: no body", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8), ns("x"))
			f.Return(f.ExplicitAxes(nil, []mesh.NamedSharding{ns("x")}, nil, x)...)
		}, []error{lower.ErrFunction}, "explicit_axes needs a body"},
		{"explicit axes: no mesh", nil, func(f *lower.Function) {
			f.Return(f.ExplicitAxes(nil, []mesh.NamedSharding{}, func(a []lower.Value) []lower.Value {
				return []lower.Value{f.Iota(f32(2), 0)}
			})...)
		}, []error{lower.ErrShardingType}, "Context mesh cannot be empty"},
		{"unconstrained explicit dimension on a mixed mesh", nil, func(f *lower.Function) {
			x := f.ShardedArg(f32(8, 4), xsh(t, mixed24, "X"))
			f.Return(f.ShardingConstraint(x, xsh(t, mixed24, mesh.Unconstrained)))
		}, []error{lower.ErrSharding}, "cannot be left unconstrained"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := lower.NewModule("f", tc.opts...)
			tc.build(m.Main())
			_, err := m.Build()
			require.Error(t, err)
			for _, s := range tc.sentinel {
				assert.True(t, errors.Is(err, s), "%v does not wrap %v", err, s)
			}
			assert.True(t, strings.Contains(err.Error(), tc.msg), "%q lacks %q", err, tc.msg)
			var oe *lower.OpError
			assert.True(t, errors.As(err, &oe))
		})
	}
}

// In a loop's body, as in the function, a constraint on an all-Explicit mesh is an assertion.
func TestConstraintInLoopBodyAsserts(t *testing.T) {
	m := lower.NewModule("f")
	f := m.Main()
	x := f.ShardedArg(f32(8, 4), xsh(t, explicit24, "X", "Y"))
	f.Return(f.ForLoop(2, []lower.Value{x}, func(g *stablehlo.Function, _ lower.Value, c []lower.Value) []lower.Value {
		return []lower.Value{lower.FunctionOf(g).ShardingConstraint(c[0], xsh(t, explicit24, "Y"))}
	})...)
	_, err := m.Build()
	require.ErrorIs(t, err, lower.ErrShardingType)
	assert.Contains(t, err.Error(), "did not match the sharding provided: P('Y',)")
}

// A loop inside a shard_map body is per-device code: not typed, no constraints in it.
func TestShardMapBodyLoopUntyped(t *testing.T) {
	m := lower.NewModule("f")
	f := m.Main()
	x := f.ShardedArg(f32(8, 4), xsh(t, explicit24, "X", "Y"))
	out := f.ShardMap(explicit24.Abstract(), nil, []mesh.PartitionSpec{mesh.P("X", "Y")}, nil,
		func(g *lower.Function, b []lower.Value) []lower.Value {
			return g.ForLoop(2, b, func(h *stablehlo.Function, _ lower.Value, c []lower.Value) []lower.Value {
				return []lower.Value{h.Add(c[0], c[0])}
			})
		}, x)
	assert.Equal(t, "float32[8@X,4@Y]", f.TypeOf(out[0]).String())
	f.Return(out...)
	p, err := m.Build()
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(p.Text(), "sdy.sharding_constraint"), "only the shard_map's result is constrained:\n%s", p.Text())
}

// GatherOut states the sharding a gather on a sharded dimension cannot infer.
func TestGatherOut(t *testing.T) {
	m := lower.NewModule("f")
	f := m.Main()
	x := f.ShardedArg(f32(8, 4), xsh(t, explicit24, "X", "Y"))
	i := f.Arg(lower.NewShape(dtypes.Int32, 3, 1))
	rows := stablehlo.GatherParams{Dims: stablehlo.GatherDims{OffsetDims: []int{1}, CollapsedSliceDims: []int{0},
		StartIndexMap: []int{0}, IndexVectorDim: 1}, SliceSizes: []int{1, 4}}
	g := f.GatherOut(x, i, rows, lower.Out(mesh.P(nil, "Y")))
	assert.Equal(t, "float32[3,4@Y]", f.TypeOf(g).String())
	f.Return(g)
	_, err := m.Build()
	require.NoError(t, err)
}

// rng_bit_generator's state keeps its type and its bits are replicated, unless given an out
// sharding (JAX's rule; the oracle cannot compare it: JAX passes the key as u32[4] through a
// bitcast that changes rank).
func TestRngBitGeneratorTypes(t *testing.T) {
	m := lower.NewModule("f")
	f := m.Main()
	s := f.ShardedArg(lower.NewShape(dtypes.Uint64, 2), xsh(t, explicit24))
	_, bits := f.RngBitGenerator(s, stablehlo.RngThreeFry, lower.NewShape(dtypes.Uint32, 8, 4))
	ns, sharded := f.RngBitGeneratorOut(s, stablehlo.RngThreeFry, lower.NewShape(dtypes.Uint32, 8, 4), lower.Out(mesh.P("X", "Y")))
	assert.Equal(t, "uint32[8,4]", f.TypeOf(bits).String())
	assert.Equal(t, "uint32[8@X,4@Y]", f.TypeOf(sharded).String())
	assert.Equal(t, "uint64[2]", f.TypeOf(ns).String())
	f.Return(bits, sharded)
	p, err := m.Build()
	require.NoError(t, err)
	assert.Contains(t, p.Text(), `<@mesh, [{"X"}, {"Y"}]> : tensor<8x4xui32>`)
}

// The operands of an elementwise op are constrained to its result's sharding first, then
// moved behind the constraints: the printed module defines every value before its use.
func TestOperandsConstrainedBeforeTheOp(t *testing.T) {
	m := lower.NewModule("f")
	f := m.Main()
	x := f.ShardedArg(f32(8, 4), xsh(t, explicit24, "X"))
	y := f.ShardedArg(f32(8, 4), xsh(t, explicit24, nil, "Y"))
	s := f.Add(x, y)
	f.Return(s)
	p, err := m.Build()
	require.NoError(t, err)
	want := []string{
		`%0 = sdy.sharding_constraint %arg0 <@mesh, [{"X"}, {"Y"}]>`,
		`%1 = sdy.sharding_constraint %arg1 <@mesh, [{"X"}, {"Y"}]>`,
		`%2 = "stablehlo.add"(%0, %1)`,
		`%3 = sdy.sharding_constraint %2 <@mesh, [{"X"}, {"Y"}]>`,
	}
	text := p.Text()
	at := 0
	for _, w := range want {
		i := strings.Index(text[at:], w)
		require.GreaterOrEqual(t, i, 0, "%q not in order in\n%s", w, text)
		at += i
	}
}

func TestPcastErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		axes  []string
		outer bool
		want  error
		msg   string
	}{
		{"outside a shard_map", []string{"x"}, true, lower.ErrNotManual, "needs a ShardMap body"},
		{"unknown axis", []string{"z"}, false, lower.ErrUnknownAxis, `unknown axis "z"`},
		{"not manual", []string{"y"}, false, lower.ErrNotManual, `axis "y" is not a manual axis`},
		{"twice", []string{"x", "x"}, false, lower.ErrNotManual, `axis "x" named twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := lower.NewModule("f")
			f := m.Main()
			x := f.ShardedArg(f32(8, 4), ns("x"))
			if tc.outer {
				f.Return(f.Pcast(x, tc.axes...))
			} else {
				f.Return(f.ShardMap(mesh42.Abstract(), []mesh.PartitionSpec{mesh.P("x")}, []mesh.PartitionSpec{mesh.P("x")}, []string{"x"},
					func(g *lower.Function, a []lower.Value) []lower.Value {
						return []lower.Value{g.Pcast(a[0], tc.axes...)}
					}, x)...)
			}
			_, err := m.Build()
			require.ErrorIs(t, err, tc.want)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

// An argument without a sharding is the builder's Arg: under sharding in types it is
// replicated, whether typing started before it (WithMesh) or after it (a later argument
// sharded over an Explicit axis), as JAX types an unsharded jit argument.
func TestPlainArgTyped(t *testing.T) {
	for _, withMesh := range []bool{false, true} {
		var opts []lower.Option
		if withMesh {
			opts = append(opts, lower.WithMesh(explicit24.Abstract()))
		}
		m := lower.NewModule("f", opts...)
		f := m.Main()
		x := f.Arg(f32(8, 4))
		y := f.ShardedArg(f32(8, 4), xsh(t, explicit24, "X"))
		z := f.Arg(f32(8, 4))
		for _, v := range []lower.Value{x, z} {
			ty := f.TypeOf(v)
			assert.True(t, ty.Typed(), "WithMesh %v", withMesh)
			assert.Equal(t, "float32[8,4]", ty.String(), "WithMesh %v", withMesh)
		}
		assert.Equal(t, "float32[8@X,4]", f.TypeOf(f.Add(f.Add(x, y), z)).String(), "WithMesh %v", withMesh)
		f.Return(x)
		p, err := m.Build()
		require.NoError(t, err)
		assert.Contains(t, p.Text(), `%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}`)
	}
}
