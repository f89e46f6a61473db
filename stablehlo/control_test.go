package stablehlo_test

import (
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

type (
	fn  = stablehlo.Function
	val = stablehlo.Value
)

func f32s(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float32, dims...) }
func i32s(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Int32, dims...) }

// opError builds a module with build and returns its *OpError (failing if there is none).
func opError(t *testing.T, build func(f *fn)) *stablehlo.OpError {
	t.Helper()
	m := stablehlo.NewModule("t")
	build(m.Main())
	_, err := m.Build()
	var oe *stablehlo.OpError
	require.ErrorAs(t, err, &oe)
	return oe
}

// lastOp returns the last op of f named name.
func lastOp(f *fn, name string) *stablehlo.Op {
	var o *stablehlo.Op
	for _, op := range f.Ops() {
		if op.Name() == name {
			o = op
		}
	}
	return o
}

func TestWhileBuild(t *testing.T) {
	m := stablehlo.NewModule("t")
	f := m.Main()
	x := f.Arg(f32s(3))
	w := f.Mul(x, f.Constant(2))
	r := f.While([]val{f.Constant(int32(0)), x},
		func(g *fn, c []val) val { return g.Less(c[0], g.Constant(3)) },
		func(g *fn, c []val) []val { return []val{g.Add(c[0], g.Constant(1)), g.Add(c[1], w)} })
	require.Len(t, r, 2)
	require.Equal(t, i32s(), r[0].Shape())
	require.Equal(t, f32s(3), r[1].Shape())
	f.Return(r[1])
	text, err := m.Build()
	require.NoError(t, err)
	require.NoError(t, mlir.Check(text))
	require.Contains(t, text, `%3:2 = "stablehlo.while"(%2, %arg0) ({`)
	require.Contains(t, text, `"stablehlo.add"(%arg4, %1)`) // w is used inside the body

	o := lastOp(f, "stablehlo.while")
	require.Equal(t, stablehlo.WhileParams{TripCount: -1}, o.Params())
	rs := o.Regions()
	require.Len(t, rs, 2)
	require.Empty(t, rs[0].Captures())
	require.Equal(t, []val{w}, rs[1].Captures())
	require.Nil(t, f.Captures())
}

func TestForLoopParams(t *testing.T) {
	m := stablehlo.NewModule("t")
	f := m.Main()
	x := f.Arg(f32s(2))
	r := f.ForLoop(4, []val{x}, func(g *fn, i val, c []val) []val {
		require.Equal(t, i32s(), i.Shape())
		return []val{g.Add(c[0], g.Convert(i, dtypes.Float32))}
	})
	require.Len(t, r, 1)
	f.Return(r...)
	_, err := m.Build()
	require.NoError(t, err)
	o := lastOp(f, "stablehlo.while")
	require.Equal(t, stablehlo.WhileParams{TripCount: 4}, o.Params())
	require.Len(t, o.Operands(), 2) // the counter, then x
}

func TestIfCaseBuild(t *testing.T) {
	m := stablehlo.NewModule("t")
	f := m.Main()
	p := f.Arg(stablehlo.NewShape(dtypes.Bool))
	x := f.Arg(i32s(2))
	r := f.If(p,
		func(g *fn) []val { return []val{g.Constant(1), x} }, // weak 1 takes the other branch's type
		func(g *fn) []val { return []val{g.Sum(x), g.Neg(x)} })
	require.Equal(t, i32s(), r[0].Shape())
	c := f.Case(f.Constant(1), // a weak index is i32
		func(g *fn) []val { return []val{x} },
		func(g *fn) []val { return []val{g.Add(x, r[1])} })
	f.Return(r[0], c[0])
	text, err := m.Build()
	require.NoError(t, err)
	require.NoError(t, mlir.Check(text))
	require.Contains(t, text, `"stablehlo.if"(%arg0) ({`)
	require.Contains(t, text, "^bb0():")
	require.Contains(t, text, `"stablehlo.return"(%arg1) : (tensor<2xi32>) -> ()`) // a captured value yielded as it is
	o := lastOp(f, "stablehlo.case")
	require.Nil(t, o.Params())
	require.Len(t, o.Regions(), 2)
	require.Equal(t, []val{x}, o.Regions()[0].Captures())
	require.Equal(t, []val{x, r[1]}, o.Regions()[1].Captures())
}

// TestCaptureScopes: open regions see the values of enclosing functions up to the nearest
// closed region; nothing else.
func TestCaptureScopes(t *testing.T) {
	t.Run("nested open regions", func(t *testing.T) {
		m := stablehlo.NewModule("t")
		f := m.Main()
		x := f.Arg(f32s(2))
		r := f.ForLoop(2, []val{x}, func(g *fn, i val, c []val) []val {
			inner := g.ForLoop(3, []val{c[0]}, func(h *fn, j val, d []val) []val {
				return []val{h.Add(h.Add(d[0], x), c[0])} // x from @main, c[0] from the outer body
			})
			return inner
		})
		f.Return(r...)
		_, err := m.Build()
		require.NoError(t, err)
		outer := lastOp(f, "stablehlo.while").Regions()[1]
		require.Equal(t, []val{x}, outer.Captures())
	})
	t.Run("beyond a closed region", func(t *testing.T) {
		oe := opError(t, func(f *fn) {
			x := f.Arg(f32s(2))
			f.BuildRegion([]stablehlo.Shape{f32s(2)}, func(g *fn, a []val) []val {
				return g.ForLoop(1, []val{a[0]}, func(h *fn, _ val, c []val) []val {
					return []val{h.Add(c[0], x)} // x is outside the closed region g
				})
			})
		})
		require.ErrorIs(t, oe, stablehlo.ErrForeignValue)
		require.Equal(t, "add", oe.Op)
	})
	t.Run("inside a closed region", func(t *testing.T) {
		m := stablehlo.NewModule("t")
		f := m.Main()
		f.BuildRegion([]stablehlo.Shape{f32s(2)}, func(g *fn, a []val) []val {
			return g.ForLoop(1, []val{a[0]}, func(h *fn, _ val, c []val) []val {
				return []val{h.Add(c[0], a[0])} // a[0] is g's own
			})
		})
		require.NoError(t, m.Err())
	})
	t.Run("sibling region", func(t *testing.T) {
		oe := opError(t, func(f *fn) {
			x := f.Arg(f32s(2))
			var leaked val
			f.While([]val{x},
				func(g *fn, c []val) val {
					leaked = g.Neg(c[0])
					return g.Constant(true)
				},
				func(g *fn, c []val) []val { return []val{g.Add(c[0], leaked)} })
		})
		require.ErrorIs(t, oe, stablehlo.ErrForeignValue)
		require.Contains(t, oe.Error(), "outside the region")
	})
	t.Run("region value used after the op", func(t *testing.T) {
		oe := opError(t, func(f *fn) {
			x := f.Arg(f32s(2))
			var leaked val
			f.If(f.Constant(true), func(g *fn) []val { leaked = g.Neg(x); return []val{leaked} },
				func(g *fn) []val { return []val{x} })
			f.Return(f.Add(x, leaked))
		})
		require.ErrorIs(t, oe, stablehlo.ErrForeignValue)
	})
	t.Run("another function", func(t *testing.T) {
		oe := opError(t, func(f *fn) {
			h := f.Module().Func("helper")
			hx := h.Arg(f32s(2))
			h.Return(hx)
			x := f.Arg(f32s(2))
			f.If(f.Constant(true), func(g *fn) []val { return []val{g.Add(x, hx)} },
				func(g *fn) []val { return []val{x} })
		})
		require.ErrorIs(t, oe, stablehlo.ErrForeignValue)
		require.Equal(t, "stablehlo: @main: add: operand 1 (%arg0): value from another function: value is defined in @helper, not in @main", oe.Error())
	})
}

func TestControlErrors(t *testing.T) {
	tests := []struct {
		name     string
		build    func(f *fn)
		sentinel error
		op, msg  string // msg: a part of the error text
	}{
		{"while without values", func(f *fn) {
			f.While(nil, func(g *fn, c []val) val { return g.Constant(true) }, func(g *fn, c []val) []val { return c })
		}, stablehlo.ErrFunction, "while", "at least one loop-carried value"},
		{"while nil cond", func(f *fn) {
			f.While([]val{f.Arg(f32s())}, nil, func(g *fn, c []val) []val { return c })
		}, stablehlo.ErrFunction, "while", "needs a cond and a body"},
		{"cond not pred", func(f *fn) {
			f.While([]val{f.Arg(f32s())}, func(g *fn, c []val) val { return c[0] }, func(g *fn, c []val) []val { return c })
		}, stablehlo.ErrDType, "while", "cond result 0 is tensor<f32>, want tensor<i1>"},
		{"cond not scalar", func(f *fn) {
			f.While([]val{f.Arg(f32s(2))}, func(g *fn, c []val) val { return g.Less(c[0], g.Constant(1)) },
				func(g *fn, c []val) []val { return c })
		}, stablehlo.ErrShape, "while", "cond result 0 is tensor<2xi1>, want tensor<i1>"},
		{"body count", func(f *fn) {
			f.While([]val{f.Arg(f32s())}, func(g *fn, c []val) val { return g.Constant(true) },
				func(g *fn, c []val) []val { return append(c, c[0]) })
		}, stablehlo.ErrShape, "while", "body results: got 2 values, want 1"},
		{"body type", func(f *fn) {
			f.While([]val{f.Arg(f32s())}, func(g *fn, c []val) val { return g.Constant(true) },
				func(g *fn, c []val) []val { return []val{g.Convert(c[0], dtypes.Int32)} })
		}, stablehlo.ErrDType, "while", "body result 0 is tensor<i32>, want tensor<f32>"},
		{"for loop negative", func(f *fn) {
			f.ForLoop(-1, []val{f.Arg(f32s())}, func(g *fn, i val, c []val) []val { return c })
		}, stablehlo.ErrShape, "while", "trip count -1 out of range"},
		{"if pred", func(f *fn) {
			x := f.Arg(f32s())
			f.If(x, func(g *fn) []val { return []val{x} }, func(g *fn) []val { return []val{x} })
		}, stablehlo.ErrShape, "if", "predicate must be an i1 scalar"},
		{"if nil branch", func(f *fn) {
			f.If(f.Constant(true), nil, func(g *fn) []val { return nil })
		}, stablehlo.ErrFunction, "if", "two branches"},
		{"if counts differ", func(f *fn) {
			x := f.Arg(f32s())
			f.If(f.Constant(true), func(g *fn) []val { return []val{x} }, func(g *fn) []val { return []val{x, x} })
		}, stablehlo.ErrShape, "if", "branch 1 returns 2 values, branch 0 returns 1"},
		{"if types differ", func(f *fn) {
			x := f.Arg(f32s())
			f.If(f.Constant(true), func(g *fn) []val { return []val{x} }, func(g *fn) []val { return []val{g.Convert(x, dtypes.Int32)} })
		}, stablehlo.ErrDType, "if", "branch 1 result 0 is tensor<i32>, want tensor<f32>"},
		{"case shapes differ", func(f *fn) {
			x := f.Arg(i32s(2))
			f.Case(f.Constant(1), func(g *fn) []val { return []val{x} }, func(g *fn) []val { return []val{g.Constant(int32(5))} })
		}, stablehlo.ErrShape, "case", "branch 1 result 0 is tensor<i32>, want tensor<2xi32>"},
		{"case no branch", func(f *fn) { f.Case(f.Constant(0)) }, stablehlo.ErrFunction, "case", "at least one branch"},
		{"case index type", func(f *fn) {
			f.Case(f.Constant(int64(0)), func(g *fn) []val { return nil })
		}, stablehlo.ErrDType, "case", "index must be an i32 scalar, got tensor<i64> (Switch converts"},
		{"case index shape", func(f *fn) {
			f.Case(f.Arg(i32s(2)), func(g *fn) []val { return nil })
		}, stablehlo.ErrShape, "case", "index must be an i32 scalar"},
		{"switch float index", func(f *fn) {
			f.Switch(f.Arg(f32s()), func(g *fn) []val { return nil })
		}, stablehlo.ErrShape, "case", "switch index must be an integer scalar"},
		{"scan nil body", func(f *fn) {
			f.Scan(nil, nil, []val{f.Arg(f32s(3))}, stablehlo.ScanOptions{})
		}, stablehlo.ErrFunction, "scan", "needs a body"},
		{"scan scalar input", func(f *fn) {
			f.Scan(func(g *fn, c, x []val) ([]val, []val) { return c, nil }, nil, []val{f.Arg(f32s())}, stablehlo.ScanOptions{})
		}, stablehlo.ErrShape, "scan", "scanned input must have an axis 0"},
		{"scan lengths differ", func(f *fn) {
			f.Scan(func(g *fn, c, x []val) ([]val, []val) { return c, nil }, nil, []val{f.Arg(f32s(3)), f.Arg(f32s(4))}, stablehlo.ScanOptions{})
		}, stablehlo.ErrShape, "scan", "scanned inputs differ in length: 4 vs 3"},
		{"scan length option", func(f *fn) {
			f.Scan(func(g *fn, c, x []val) ([]val, []val) { return c, nil }, nil, []val{f.Arg(f32s(3))}, stablehlo.ScanOptions{Length: 5})
		}, stablehlo.ErrShape, "scan", "scan length 5 differs from the inputs' length 3"},
		{"scan carry count", func(f *fn) {
			x := f.Arg(f32s(3))
			f.Scan(func(g *fn, c, x []val) ([]val, []val) { return nil, x }, []val{f.Constant(float32(0))}, []val{x}, stablehlo.ScanOptions{})
		}, stablehlo.ErrShape, "scan", "body returned 0 carried values for 1"},
		{"scan carry type", func(f *fn) {
			x := f.Arg(f32s(3))
			f.Scan(func(g *fn, c, x []val) ([]val, []val) { return []val{g.Convert(c[0], dtypes.Int32)}, nil },
				[]val{f.Constant(float32(0))}, []val{x}, stablehlo.ScanOptions{})
		}, stablehlo.ErrDType, "scan", "body result 1 is tensor<i32>, want tensor<f32>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			oe := opError(t, tc.build)
			require.ErrorIs(t, oe, tc.sentinel)
			require.Equal(t, tc.op, oe.Op)
			require.Contains(t, oe.Error(), tc.msg)
			require.Equal(t, "main", oe.Func)
		})
	}
}

// TestControlNoPanicAfterError: the callbacks still run after an error, with regions whose
// arguments exist, and the results have their length.
func TestControlNoPanicAfterError(t *testing.T) {
	m := stablehlo.NewModule("t")
	f := m.Main()
	x := f.Arg(f32s(2))
	f.Add(x, f.Arg(f32s(3))) // an error
	require.Error(t, m.Err())
	r := f.While([]val{x, x}, func(g *fn, c []val) val { return g.Less(c[0], c[1]) },
		func(g *fn, c []val) []val { return []val{c[1], c[0]} })
	require.Len(t, r, 2)
	require.Len(t, f.ForLoop(3, []val{x}, func(g *fn, i val, c []val) []val { return c }), 1)
	require.Len(t, f.If(x, func(g *fn) []val { return []val{x, x} }, func(g *fn) []val { return []val{x, x} }), 2)
	require.Len(t, f.Switch(x, func(g *fn) []val { return []val{x} }), 1)
	carry, ys := f.Scan(func(g *fn, c, xs []val) ([]val, []val) { return []val{c[0]}, []val{xs[0], xs[0]} },
		[]val{x}, []val{x}, stablehlo.ScanOptions{})
	require.Len(t, carry, 1)
	require.Len(t, ys, 2)
	require.False(t, r[0].Valid())
}

// TestControlRun runs the ops on the CPU plugin: StableHLO's out-of-range case index,
// Switch's clamping, zero-trip loops, a zero-length scan and captures in every region kind.
func TestControlRun(t *testing.T) {
	c := pjrttest.Client(t)
	m := stablehlo.NewModule("t")
	f := m.Main()
	x := f.Arg(f32s(3))
	i := f.Arg(i32s())
	br := func(k float64) func(g *fn) []val {
		return func(g *fn) []val { return []val{g.Add(x, g.Constant(k))} }
	}
	caseOut := f.Case(i, br(10), br(20), br(30))[0]
	switchOut := f.Switch(i, br(10), br(20), br(30))[0]
	zeroTrip := f.ForLoop(0, []val{x}, func(g *fn, _ val, c []val) []val { return []val{g.Neg(c[0])} })[0]
	empty := f.Reshape(f.Full(f32s(0), 0), 0, 3)
	carry, ys := f.Scan(func(g *fn, c, xs []val) ([]val, []val) {
		return []val{g.Add(c[0], xs[0])}, []val{g.Mul(xs[0], x)}
	}, []val{x}, []val{empty}, stablehlo.ScanOptions{})
	w := f.While([]val{f.Constant(int32(0)), x},
		func(g *fn, cc []val) val { return g.Less(cc[0], i) }, // i captured in the condition
		func(g *fn, cc []val) []val {
			return []val{g.Add(cc[0], g.Constant(1)), g.If(g.Less(cc[0], g.Constant(2)),
				func(h *fn) []val { return []val{h.Add(cc[1], x)} }, // captured from two levels
				func(h *fn) []val { return []val{h.Mul(cc[1], g.Constant(2))} })[0]}
		})[1]
	f.Return(caseOut, switchOut, zeroTrip, carry[0], ys[0], w)
	text, err := m.Build()
	require.NoError(t, err)
	prog := program{text: text, args: []stablehlo.Shape{f32s(3), i32s()}}
	xs := []float32{1, 2, 3}
	for _, tc := range []struct {
		i            int32
		cased, swich float32
		w            []float32
	}{
		{-1, 30, 10, []float32{1, 2, 3}}, // StableHLO: out of range runs the last branch; Switch clamps to 0
		{1, 20, 20, []float32{2, 4, 6}},
		{7, 30, 30, []float32{96, 192, 288}}, // 2x, 3x, then doubled 5 times
	} {
		got := run1(t, c, prog, xs, []int32{tc.i})
		add := func(k float32) []float32 { return []float32{1 + k, 2 + k, 3 + k} }
		require.Equal(t, add(tc.cased), got[0], "case %d", tc.i)
		require.Equal(t, add(tc.swich), got[1], "switch %d", tc.i)
		require.Equal(t, xs, got[2])
		require.Equal(t, xs, got[3])
		require.Equal(t, []float32{}, got[4])
		require.Equal(t, tc.w, got[5], "while %d", tc.i)
	}
	require.Equal(t, 3, strings.Count(text, `"stablehlo.while"`))
}
