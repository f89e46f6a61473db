package stablehlo_test

import (
	"errors"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/stablehlo"
)

var errNote = errors.New("bad note")

type noteKey struct{}

// noteParams are the parameters of the test's own op, my.note.
type noteParams struct{ text string }

func printNote(p *stablehlo.Printer, o *stablehlo.Op) {
	p.Indent()
	p.Def(o.Results()...)
	p.WriteString("my.note ")
	p.Values(o.Operands())
	p.WriteString(" " + o.Params().(noteParams).text + " : ")
	p.ResultTypes(o.Results())
	p.WriteString("\n")
}

// note is how a package built on stablehlo adds an op: checks through Operands, errors
// through Failf, the op through AddOp with a PrintFunc, state found with Context.
func note(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
	vs, ok := f.Operands("my.note", x)
	if !ok {
		return stablehlo.Value{}
	}
	text, _ := f.Context(noteKey{}).(string)
	if text == "" {
		f.Failf("my.note", 0, vs[0], errNote, "no note in scope")
		return stablehlo.Value{}
	}
	return f.AddOp(stablehlo.OpSpec{Name: "my.note", Operands: vs, Results: []stablehlo.Shape{vs[0].Shape()},
		Params: noteParams{text}, Print: printNote})[0]
}

// TestExtension: module attributes, a preamble, argument and result attributes, an op of
// another package inside a region, and the region's context seen from a nested region.
func TestExtension(t *testing.T) {
	m := stablehlo.NewModule("ext", stablehlo.ErrorPrefix("ext"))
	m.SetAttr("mhlo.num_partitions", "2 : i32")
	m.SetAttr("my.flag", "true")
	m.SetAttr("my.flag", "")
	m.SetPreamble(`my.symbol @s = "x"`)
	f := m.Main()
	s := stablehlo.NewShape(dtypes.Float32, 4)
	x := f.Arg(s)
	f.SetArgAttr(0, "my.arg", `"a"`)
	f.SetArgAttr(0, "my.other", "1 : i32")
	g := f.NewRegion(s)
	g.SetContext(noteKey{}, "outer")
	inner := g.NewRegion(s)
	require.Equal(t, "outer", inner.Context(noteKey{}), "Context looks outward")
	require.Same(t, g, inner.Parent())
	y := note(g, g.Exp(g.Args()[0]))
	require.True(t, g.Yield("my.end", y, g.Full(s, 1.0)))
	r := f.AddOp(stablehlo.OpSpec{Name: "my.wrap", Operands: []stablehlo.Value{x}, Results: []stablehlo.Shape{s, s},
		Regions: []*stablehlo.Function{g}})
	f.Return(r[0], f.CustomCall("Thing", []stablehlo.Value{r[1]}, []stablehlo.Shape{s}, stablehlo.Attr{Name: "backend_config", Value: `"k"`})[0])
	f.SetResultAttr(1, "my.res", "unit")
	text, err := m.Build()
	require.NoError(t, err)
	want := `module @ext attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  my.symbol @s = "x"
  func.func public @main(%arg0: tensor<4xf32> {my.arg = "a", my.other = 1 : i32}) -> (tensor<4xf32>, tensor<4xf32> {my.res = unit}) {
    %0:2 = "my.wrap"(%arg0) ({
    ^bb0(%arg1: tensor<4xf32>):
      %1 = "stablehlo.exponential"(%arg1) : (tensor<4xf32>) -> tensor<4xf32>
      %2 = my.note %1 outer : tensor<4xf32>
      %3 = stablehlo.constant dense<1.0> : tensor<4xf32>
      "stablehlo.return"(%2, %3) : (tensor<4xf32>, tensor<4xf32>) -> ()
    }) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
    %4 = stablehlo.custom_call @Thing(%0#1) {backend_config = "k"} : (tensor<4xf32>) -> tensor<4xf32>
    return %0#0, %4 : tensor<4xf32>, tensor<4xf32>
  }
}
`
	require.Equal(t, want, text)
	ops := f.Ops()
	require.Len(t, ops, 2)
	require.Equal(t, "my.wrap", ops[0].Name())
	require.Len(t, ops[0].Regions(), 1)
	require.Equal(t, "my.note", g.Ops()[1].Name())
	require.Equal(t, stablehlo.CustomCallParams{Target: "Thing", Attrs: []stablehlo.Attr{{Name: "backend_config", Value: `"k"`}}}, ops[1].Params())
	require.Equal(t, []stablehlo.Attr{{Name: "my.arg", Value: `"a"`}, {Name: "my.other", Value: "1 : i32"}}, f.ArgAttrs(0))

	// The extension's error sticks, with the module's prefix.
	m2 := stablehlo.NewModule("ext2", stablehlo.ErrorPrefix("ext"))
	f2 := m2.Main()
	x2 := f2.Arg(s)
	require.False(t, note(f2, x2).Valid())
	f2.Return(x2)
	_, err = m2.Build()
	require.ErrorIs(t, err, errNote)
	require.EqualError(t, err, "ext: @main: my.note: operand 0 (%arg0): bad note: no note in scope")
}

// TestRegions: BuildRegion makes a region from a callback; regions are closed; misuse is
// an error wrapping ErrFunction.
func TestRegions(t *testing.T) {
	s := stablehlo.NewShape(dtypes.Int32)
	tests := []struct {
		name     string
		build    func(f *stablehlo.Function, x stablehlo.Value)
		sentinel error
		msg      string
	}{
		{"outer value", func(f *stablehlo.Function, x stablehlo.Value) {
			f.BuildRegion([]stablehlo.Shape{s}, func(g *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
				return []stablehlo.Value{g.Add(a[0], x)}
			})
		}, stablehlo.ErrForeignValue, "stablehlo: @main: add: operand 1 (%arg0): value from another function: using value defined outside the region"},
		{"yield an outer value", func(f *stablehlo.Function, x stablehlo.Value) {
			f.BuildRegion(nil, func(g *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value { return []stablehlo.Value{x} })
		}, stablehlo.ErrForeignValue, "stablehlo: @main: stablehlo.return: operand 0 (%arg0)"},
		{"yield twice", func(f *stablehlo.Function, x stablehlo.Value) {
			g := f.NewRegion()
			g.Yield("stablehlo.return")
			g.Yield("stablehlo.return")
		}, stablehlo.ErrFunction, "already returned"},
		{"yield a function", func(f *stablehlo.Function, x stablehlo.Value) { f.Yield("stablehlo.return", x) },
			stablehlo.ErrFunction, "@main is a function, not a region; use Return"},
		{"return a region", func(f *stablehlo.Function, x stablehlo.Value) { f.NewRegion().Return() },
			stablehlo.ErrFunction, "a region body returns by its body function's results"},
		{"argument of a region", func(f *stablehlo.Function, x stablehlo.Value) { f.NewRegion().Arg(s) },
			stablehlo.ErrFunction, "arguments of a region are created by the op that owns it"},
		{"region argument type", func(f *stablehlo.Function, x stablehlo.Value) { f.NewRegion(stablehlo.NewShape(dtypes.TOKEN)) },
			stablehlo.ErrDType, "region argument: operand 0: element type mismatch"},
		{"unended region", func(f *stablehlo.Function, x stablehlo.Value) {
			f.AddOp(stablehlo.OpSpec{Name: "my.op", Regions: []*stablehlo.Function{f.NewRegion()}})
		}, stablehlo.ErrFunction, "region 0 is not an ended region of this function"},
		{"op after return", func(f *stablehlo.Function, x stablehlo.Value) {
			g := f.Module().Func("g")
			g.Return()
			g.Neg(g.Constant(int32(1)))
		}, stablehlo.ErrFunction, "function @g already returned"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("r")
			f := m.Main()
			x := f.Arg(s)
			tc.build(f, x)
			f.Return(x)
			_, err := m.Build()
			require.ErrorIs(t, err, tc.sentinel)
			require.ErrorContains(t, err, tc.msg)
		})
	}

	// A region built from a callback, used by an op of its function.
	m := stablehlo.NewModule("r")
	f := m.Main()
	x := f.Arg(s)
	g := f.BuildRegion([]stablehlo.Shape{s, s}, func(g *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
		return []stablehlo.Value{g.Max(a[0], a[1])}
	})
	require.NotNil(t, g)
	require.True(t, g.IsRegion())
	require.Len(t, g.Results(), 1)
	f.Return(f.AddOp(stablehlo.OpSpec{Name: "my.apply", Operands: []stablehlo.Value{x}, Results: []stablehlo.Shape{s},
		Regions: []*stablehlo.Function{g}})...)
	text, err := m.Build()
	require.NoError(t, err)
	require.Contains(t, text, "^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):\n      %1 = \"stablehlo.maximum\"(%arg1, %arg2)")
}

// TestCollectives: explicit replica groups print as given; malformed groups are errors
// wrapping ErrReplicaGroups, and the module checker accepts what is built.
func TestCollectives(t *testing.T) {
	s := stablehlo.NewShape(dtypes.Float32, 4, 4)
	m := stablehlo.NewModule("c")
	m.SetAttr("mhlo.num_partitions", "4 : i32")
	f := m.Main()
	x := f.Arg(s)
	groups := [][]int{{0, 2}, {1, 3}}
	a := f.AllGather(x, 1, groups)
	b := f.ReduceScatter(x, stablehlo.Sum, 0, groups)
	c := f.AllToAll(x, 0, 1, groups)
	d := f.CollectivePermute(x, [][2]int{{0, 1}, {1, 0}})
	e := f.AllReduce(x, stablehlo.Max, [][]int{{0, 1, 2, 3}})
	f.Return(a, b, c, d, e)
	text, err := m.Build()
	require.NoError(t, err)
	require.NoError(t, mlir.Check(text, mlir.Partitions(4)))
	for _, want := range []string{
		`"stablehlo.all_gather"(%arg0) <{all_gather_dim = 1 : i64, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, use_global_device_ids}> : (tensor<4x4xf32>) -> tensor<4x8xf32>`,
		`replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, scatter_dimension = 0 : i64, use_global_device_ids}>`,
		`concat_dimension = 1 : i64, replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, split_count = 2 : i64, split_dimension = 0 : i64}> : (tensor<4x4xf32>) -> tensor<2x8xf32>`,
		`<{channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>, source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}>`,
		`replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>`,
	} {
		require.Contains(t, text, want)
	}
	p, ok := f.Ops()[0].Params().(stablehlo.AllGatherParams)
	require.True(t, ok)
	require.Equal(t, stablehlo.AllGatherParams{Dim: 1, Groups: groups, Channel: 1}, p)

	bad := []struct {
		name string
		op   func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value
		msg  string
	}{
		{"no groups", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.AllReduce(x, stablehlo.Sum, nil)
		}, "no replica groups"},
		{"unequal groups", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.AllGather(x, 0, [][]int{{0, 1}, {2}})
		}, "replica group 1 has 1 ids, group 0 has 2"},
		{"repeated id", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.ReduceScatter(x, stablehlo.Sum, 0, [][]int{{0, 1}, {1, 2}})
		}, "replica group 1: id 1 is negative or repeated"},
		{"negative id", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.AllToAll(x, 0, 0, [][]int{{-1, 0}})
		}, "id -1 is negative or repeated"},
		{"empty permutation", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value { return f.CollectivePermute(x, nil) }, "empty permutation"},
		{"repeated target", func(f *stablehlo.Function, x stablehlo.Value) stablehlo.Value {
			return f.CollectivePermute(x, [][2]int{{0, 1}, {2, 1}})
		}, "pair [2 1] is negative or repeats a source or target"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("c")
			f := m.Main()
			x := f.Arg(s)
			require.False(t, tc.op(f, x).Valid())
			f.Return(x)
			_, err := m.Build()
			require.ErrorIs(t, err, stablehlo.ErrReplicaGroups)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

// TestPrinterAlias: an op whose PrintFunc writes its region's ops in place of itself names the
// region's arguments by its operands and its results by the values the region yields
// (Printer.Alias), so the module reads as if the body had been written in the function, and
// an identity region's result prints as the operand itself.
func TestPrinterAlias(t *testing.T) {
	s := stablehlo.NewShape(dtypes.Float32, 2)
	inPlace := func(p *stablehlo.Printer, o *stablehlo.Op) {
		body := o.Regions()[0]
		for i, a := range body.Args() {
			p.Alias(a, o.Operands()[i])
		}
		p.Ops(body)
		for i, r := range o.Results() {
			p.Alias(r, body.Results()[i])
		}
	}
	m := stablehlo.NewModule("alias")
	f := m.Main()
	x := f.Arg(s)
	y := f.Arg(s)
	g := f.BuildRegion([]stablehlo.Shape{s, s}, func(g *stablehlo.Function, a []stablehlo.Value) []stablehlo.Value {
		return []stablehlo.Value{g.Neg(a[0]), a[1]}
	})
	r := f.AddOp(stablehlo.OpSpec{Name: "my.in_place", Operands: []stablehlo.Value{x, y}, Results: []stablehlo.Shape{s, s},
		Regions: []*stablehlo.Function{g}, Print: inPlace})
	f.Return(f.Add(r[0], r[1]))
	text, err := m.Build()
	require.NoError(t, err)
	require.NoError(t, mlir.Check(text))
	require.Contains(t, text, "    %0 = \"stablehlo.negate\"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n"+
		"    %1 = \"stablehlo.add\"(%0, %arg1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"+
		"    return %1 : tensor<2xf32>\n")
	require.NotContains(t, text, "my.in_place")
}
