package stablehlo_test

import (
	"math"

	"github.com/gomlx/gopjrt/dtypes"

	"github.com/xlamesh/xlamesh/stablehlo"
)

// goldenCase is one module with a golden text, testdata/golden/<name>.mlir.
type goldenCase struct {
	name  string
	build func(m *stablehlo.Module)
}

// build builds a case's module, named jit_<name> as jax.jit names its modules.
func build(c goldenCase) (string, error) {
	m := stablehlo.NewModule("jit_" + c.name)
	c.build(m)
	return m.Build()
}

var goldenCases = []goldenCase{
	{name: "unary_float", build: func(m *stablehlo.Module) {
		f := m.Main()
		x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4))
		y := f.Neg(f.Abs(f.Exp(f.Log(f.Sqrt(f.Rsqrt(f.Tanh(f.Logistic(f.Floor(f.Ceil(f.Sign(f.Cos(f.Sin(x)))))))))))))
		f.Return(y)
	}},
	{name: "unary_int", build: func(m *stablehlo.Module) {
		f := m.Main()
		x := f.Arg(stablehlo.NewShape(dtypes.Int32, 4))
		p := f.Arg(stablehlo.NewShape(dtypes.Bool, 4))
		f.Return(f.Not(f.Sign(f.Abs(f.Neg(x)))), f.Not(p))
	}},
	{name: "binary", build: func(m *stablehlo.Module) {
		f := m.Main()
		x := f.Arg(stablehlo.NewShape(dtypes.Float32, 2, 3))
		y := f.Arg(stablehlo.NewShape(dtypes.Float32, 2, 3))
		s := f.Arg(stablehlo.NewShape(dtypes.Float32))
		r := f.Add(x, y)
		r = f.Sub(r, y)
		r = f.Mul(r, s)
		r = f.Div(r, f.Constant(2))
		r = f.Rem(r, y)
		r = f.Max(r, f.Min(x, y))
		r = f.Pow(r, f.Constant(2.0))
		f.Return(r)
	}},
	{name: "bitwise", build: func(m *stablehlo.Module) {
		f := m.Main()
		x := f.Arg(stablehlo.NewShape(dtypes.Uint8, 4))
		y := f.Arg(stablehlo.NewShape(dtypes.Uint8, 4))
		p := f.Arg(stablehlo.NewShape(dtypes.Bool, 4))
		q := f.Arg(stablehlo.NewShape(dtypes.Bool, 4))
		f.Return(f.Xor(f.And(x, y), f.Or(x, f.Constant(1))), f.Or(f.And(p, q), f.Xor(p, f.Constant(true))))
	}},
	{name: "compare_select", build: func(m *stablehlo.Module) {
		f := m.Main()
		x := f.Arg(stablehlo.NewShape(dtypes.Float32, 4))
		i := f.Arg(stablehlo.NewShape(dtypes.Int64, 4))
		u := f.Arg(stablehlo.NewShape(dtypes.Uint32, 4))
		out := f.Select(f.Less(x, f.Constant(0.5)), x, f.Constant(0))
		var preds []stablehlo.Value
		for _, d := range []stablehlo.Comparison{stablehlo.EQ, stablehlo.NE, stablehlo.LT, stablehlo.LE, stablehlo.GT, stablehlo.GE} {
			preds = append(preds, f.Compare(i, f.Constant(3), d))
		}
		preds = append(preds, f.Greater(u, f.Constant(1)), f.Equal(x, x))
		f.Return(append([]stablehlo.Value{out, f.Select(f.Constant(true), i, i)}, preds...)...)
	}},
	{name: "convert_constants", build: func(m *stablehlo.Module) {
		f := m.Main()
		var outs []stablehlo.Value
		for _, d := range []stablehlo.DType{dtypes.Bool, dtypes.Int8, dtypes.Int16, dtypes.Int32, dtypes.Int64, dtypes.Uint8, dtypes.Uint16,
			dtypes.Uint32, dtypes.Uint64, dtypes.Float16, dtypes.BFloat16, dtypes.Float32, dtypes.Float64} {
			var c stablehlo.Value
			if d == dtypes.Bool {
				c = f.Array([]bool{false, true, false, true}, 2, 2)
			} else {
				c = f.ArrayOf(d, []int{0, 1, 0, 1}, 2, 2)
			}
			outs = append(outs, f.Convert(c, dtypes.Float32))
		}
		outs = append(outs,
			f.Constant(float32(1.5)), f.ConstantOf(dtypes.Float64, 1e300), f.ConstantOf(dtypes.BFloat16, 0.1),
			f.Full(stablehlo.NewShape(dtypes.Float32, 2), float32(math.Copysign(0, -1))), f.Array([]float32{1, 2.5, -3e-7}, 3),
			f.ConstantOf(dtypes.Float32, float32(3.4e38)), f.ConstantOf(dtypes.Int64, -9223372036854775808),
			f.ConstantOf(dtypes.Uint64, uint64(18446744073709551615)), f.Array([]int32{1, 2, 3, 4, 5, 6}, 2, 3),
			f.Convert(f.Constant(7), dtypes.Uint16))
		f.Return(outs...)
	}},
	{name: "special_floats", build: func(m *stablehlo.Module) {
		f := m.Main()
		x := f.Arg(stablehlo.NewShape(dtypes.Float32, 3))
		f.Return(f.ReduceMax(x), f.ReduceMin(f.Convert(x, dtypes.Float16)), f.ReduceMax(f.Convert(x, dtypes.BFloat16)),
			f.ReduceMin(f.Convert(x, dtypes.Float64)), f.ReduceMax(f.Convert(x, dtypes.Int8)), f.ReduceMin(f.Convert(x, dtypes.Uint32)))
	}},
	{name: "iota", build: func(m *stablehlo.Module) {
		f := m.Main()
		f.Return(f.Iota(stablehlo.NewShape(dtypes.Int32, 4, 3), 1), f.Iota(stablehlo.NewShape(dtypes.Float32, 5), 0))
	}},
	{name: "shape_ops", build: func(m *stablehlo.Module) {
		f := m.Main()
		x := f.Arg(stablehlo.NewShape(dtypes.Float32, 2, 3))
		b := f.BroadcastInDim(x, []int{4, 2, 3}, []int{1, 2})
		c := f.BroadcastTo(f.Reshape(x, 3, 2), 5, 3, 2)
		t := f.Transpose(b, 2, 0, 1)
		f.Return(b, c, t, f.Reshape(t, 24))
	}},
	{name: "slice_ops", build: func(m *stablehlo.Module) {
		f := m.Main()
		x := f.Arg(stablehlo.NewShape(dtypes.Float32, 6, 4))
		i := f.Arg(stablehlo.NewShape(dtypes.Int32))
		s := f.Slice(x, []int{1, 0}, []int{5, 4}, []int{2, 3})
		d := f.DynamicSlice(x, []stablehlo.Value{i, f.ConstantOf(dtypes.Int32, 1)}, []int{2, 2})
		u := f.DynamicUpdateSlice(x, d, []stablehlo.Value{f.ConstantOf(dtypes.Int32, 0), i})
		f.Return(s, d, u)
	}},
	{name: "concat_pad", build: func(m *stablehlo.Module) {
		f := m.Main()
		x := f.Arg(stablehlo.NewShape(dtypes.Float32, 2, 3))
		y := f.Arg(stablehlo.NewShape(dtypes.Float32, 1, 3))
		c := f.Concatenate(0, x, y, x)
		p := f.Pad(x, f.Constant(0), []int{1, 0}, []int{0, 2}, []int{1, 0})
		f.Return(c, p, f.Pad(c, f.ConstantOf(dtypes.Float32, -1), []int{-1, 1}, []int{0, 0}, nil))
	}},
	{name: "dot_general", build: func(m *stablehlo.Module) {
		f := m.Main()
		a := f.Arg(stablehlo.NewShape(dtypes.Float32, 3, 2, 5))
		b := f.Arg(stablehlo.NewShape(dtypes.Float32, 3, 5, 4))
		f.Return(f.DotGeneral(a, b, stablehlo.DotDims{LhsBatch: []int{0}, RhsBatch: []int{0}, LhsContracting: []int{2}, RhsContracting: []int{1}}),
			f.DotGeneral(a, b, stablehlo.DotDims{}))
	}},
	{name: "reduce", build: func(m *stablehlo.Module) {
		f := m.Main()
		x := f.Arg(stablehlo.NewShape(dtypes.Int32, 2, 3, 4))
		f.Return(f.Reduce(x, stablehlo.Sum, 2, 0), f.Reduce(x, stablehlo.Prod, 1), f.ReduceMax(x, 0), f.ReduceMin(x))
	}},
}
