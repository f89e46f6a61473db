package stablehlo_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// TestReplay copies ops, with regions and collectives, into another function and region.
func TestReplay(t *testing.T) {
	s := stablehlo.NewShape(dtypes.Float32, 4, 2)
	m := stablehlo.NewModule("r")
	m.SetAttr("mhlo.num_partitions", "2 : i32")
	g := m.Func("src")
	a := g.Arg(s)
	tr := g.Transpose(a, 1, 0)
	red := g.Sum(tr, 1)
	ar := g.AllReduce(red, stablehlo.Sum, [][]int{{0, 1}})
	g.Return(ar)
	f := m.Main()
	x := f.Arg(s)
	env := map[stablehlo.Value]stablehlo.Value{a: x}
	var last []stablehlo.Value
	for _, o := range g.Ops() {
		var args []stablehlo.Value
		for _, v := range o.Operands() {
			args = append(args, env[v])
		}
		last = f.Replay(o, args...)
		for i, r := range o.Results() {
			env[r] = last[i]
		}
	}
	f.Return(last...)
	text, err := m.Build()
	require.NoError(t, err)
	main := text[:strings.Index(text, "func.func private")]
	require.Contains(t, main, `"stablehlo.transpose"(%arg0) <{permutation = array<i64: 1, 0>}>`)
	require.Contains(t, main, `"stablehlo.reduce"(%0, %1) <{dimensions = array<i64: 1>}> ({`)
	require.Contains(t, main, `"stablehlo.all_reduce"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>`)
	require.Equal(t, 2, strings.Count(main, "stablehlo.add"), "the reduce and all_reduce bodies were copied:\n%s", text)
	ops := f.Ops()
	require.Len(t, ops, 4)
	require.Equal(t, g.Ops()[1].Params(), ops[1].Params())
	require.NotSame(t, g.Ops()[2].Regions()[0], ops[2].Regions()[0])
	require.Same(t, f, ops[2].Regions()[0].Parent())
}

func TestReplayErrors(t *testing.T) {
	s := stablehlo.NewShape(dtypes.Float32, 4)
	for _, tc := range []struct {
		name string
		body func(f *stablehlo.Function, op *stablehlo.Op, x stablehlo.Value)
		want error
		msg  string
	}{
		{"count", func(f *stablehlo.Function, op *stablehlo.Op, x stablehlo.Value) { f.Replay(op) },
			stablehlo.ErrShape, "stablehlo.exponential takes 1 operands, got 0"},
		{"type", func(f *stablehlo.Function, op *stablehlo.Op, x stablehlo.Value) {
			f.Replay(op, f.Full(stablehlo.NewShape(dtypes.Float32, 3), 0))
		}, stablehlo.ErrShape, "operand 0 of stablehlo.exponential is tensor<4xf32>, got tensor<3xf32>"},
		{"nil", func(f *stablehlo.Function, op *stablehlo.Op, x stablehlo.Value) { f.Replay(nil, x) },
			stablehlo.ErrFunction, "nil op"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := stablehlo.NewModule("r")
			f := m.Main()
			x := f.Arg(s)
			e := f.Exp(x)
			tc.body(f, f.Ops()[0], x)
			f.Return(e)
			_, err := m.Build()
			require.True(t, errors.Is(err, tc.want), "%v", err)
			require.ErrorContains(t, err, tc.msg)
		})
	}
}

// ReplayWith maps the values an open region captures: the copy of an if whose branch uses x
// uses y instead.
func TestReplayWithCaptures(t *testing.T) {
	s := stablehlo.NewShape(dtypes.Float32, 2)
	m := stablehlo.NewModule("r")
	f := m.Main()
	x, y := f.Arg(s), f.Arg(s)
	p := f.Greater(f.Sum(x), f.ConstantOf(dtypes.Float32, 0))
	r := f.If(p, func(g *stablehlo.Function) []stablehlo.Value { return []stablehlo.Value{g.Exp(x)} },
		func(g *stablehlo.Function) []stablehlo.Value { return []stablehlo.Value{x} })
	ops := f.Ops()
	c := f.ReplayWith(ops[len(ops)-1], map[stablehlo.Value]stablehlo.Value{x: y}, p)
	f.Return(r[0], c[0])
	text, err := m.Build()
	require.NoError(t, err, text)
	copied := f.Ops()[len(f.Ops())-1]
	for _, g := range copied.Regions() {
		require.Equal(t, []stablehlo.Value{y}, g.Captures())
	}
}
