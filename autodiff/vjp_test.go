package autodiff_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// run builds m, runs it on the client's first device with the inputs and returns the
// outputs as host slices.
func run(t *testing.T, c *pjrt.Client, m *stablehlo.Module, inputs ...any) []any {
	t.Helper()
	text, err := m.Build()
	require.NoError(t, err)
	dev := c.Devices()[0]
	exe, err := c.Compile(text, pjrt.CompileOptions{NumPartitions: 1, DeviceAssignment: []int{dev.ID()}})
	require.NoError(t, err, "module:\n%s", text)
	defer exe.Close()
	args := m.Main().Args()
	var bufs []*pjrt.Buffer
	defer func() {
		for _, b := range bufs {
			b.Close()
		}
	}()
	for i, in := range inputs {
		b, err := c.BufferFromHost(dev, in, args[i].Shape().Dims())
		require.NoError(t, err)
		bufs = append(bufs, b)
	}
	outs, err := exe.Execute([][]*pjrt.Buffer{bufs})
	require.NoError(t, err)
	var res []any
	for _, b := range outs[0] {
		h, err := b.ToHost()
		b.Close()
		require.NoError(t, err)
		res = append(res, h)
	}
	return res
}

func f32(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Float32, dims...) }

// TestGradValues checks exact gradients of small programs, with JAX's values in comments.
func TestGradValues(t *testing.T) {
	c := pjrttest.Client(t)
	t.Run("max_ties_split", func(t *testing.T) {
		// jax.grad(lambda x, y: jnp.sum(jnp.maximum(x, y)), (0, 1))([1, 2, 3], [1, 1, 4])
		// = ([0.5, 1, 0], [0.5, 0, 1])
		m := stablehlo.NewModule("g")
		f := m.Main()
		x, y := f.Arg(f32(3)), f.Arg(f32(3))
		g := autodiff.Grad(f, f.Sum(f.Max(x, y)), x, y)
		f.Return(g...)
		got := run(t, c, m, []float32{1, 2, 3}, []float32{1, 1, 4})
		require.Equal(t, []any{[]float32{0.5, 1, 0}, []float32{0.5, 0, 1}}, got)
	})
	t.Run("reduce_max_ties_split", func(t *testing.T) {
		// jax.grad(lambda x: jnp.sum(jnp.max(x, axis=1)))([[1, 3, 3], [2, 2, 2]])
		// = [[0, 0.5, 0.5], [1/3, 1/3, 1/3]]
		m := stablehlo.NewModule("g")
		f := m.Main()
		x := f.Arg(f32(2, 3))
		f.Return(autodiff.Grad(f, f.Sum(f.ReduceMax(x, 1)), x)...)
		got := run(t, c, m, []float32{1, 3, 3, 2, 2, 2})
		third := float32(1) / 3
		require.Equal(t, []any{[]float32{0, 0.5, 0.5, third, third, third}}, got)
	})
	t.Run("abs_at_zero", func(t *testing.T) {
		// jax.grad(lambda x: jnp.sum(jnp.abs(x)))([-1, 0, 2]) = [-1, 1, 1]
		m := stablehlo.NewModule("g")
		f := m.Main()
		x := f.Arg(f32(3))
		f.Return(autodiff.Grad(f, f.Sum(f.Abs(x)), x)...)
		require.Equal(t, []any{[]float32{-1, 1, 1}}, run(t, c, m, []float32{-1, 0, 2}))
	})
	t.Run("stop_gradient", func(t *testing.T) {
		// jax.grad(lambda x: jnp.sum(x * lax.stop_gradient(x)))([1, 2]) = [1, 2]
		m := stablehlo.NewModule("g")
		f := m.Main()
		x := f.Arg(f32(2))
		l, g := autodiff.ValueAndGrad(f, f.Sum(f.Mul(x, autodiff.StopGradient(x))), x)
		f.Return(l, g[0])
		require.Equal(t, []any{[]float32{5}, []float32{1, 2}}, run(t, c, m, []float32{1, 2}))
	})
	t.Run("unused_and_integer_wrt", func(t *testing.T) {
		// jax.vjp gives an input the output does not use zeros, and an integer one float0 zeros.
		m := stablehlo.NewModule("g")
		f := m.Main()
		x, u := f.Arg(f32(2)), f.Arg(f32(2))
		i := f.Arg(stablehlo.NewShape(dtypes.Int32, 2))
		y := f.Mul(f.Mul(x, f.Convert(i, dtypes.Float32)), f.Constant(3.0))
		g := autodiff.VJP(f, []stablehlo.Value{y}, []stablehlo.Value{x, u, i}, []stablehlo.Value{f.Full(f32(2), 1)})
		f.Return(g...)
		got := run(t, c, m, []float32{1, 2}, []float32{5, 6}, []int32{4, 5})
		require.Equal(t, []any{[]float32{12, 15}, []float32{0, 0}, []int32{0, 0}}, got)
	})
	t.Run("intermediate_and_several_outputs", func(t *testing.T) {
		// h = x*x; outputs (h, 2h): cotangents (1, 1) give dh = 3 and dx = 6x.
		m := stablehlo.NewModule("g")
		f := m.Main()
		x := f.Arg(f32(2))
		h := f.Mul(x, x)
		o2 := f.Mul(h, f.Constant(2.0))
		ones := f.Full(f32(2), 1)
		g := autodiff.VJP(f, []stablehlo.Value{h, o2}, []stablehlo.Value{h, x}, []stablehlo.Value{ones, ones})
		f.Return(g...)
		require.Equal(t, []any{[]float32{3, 3}, []float32{6, 12}}, run(t, c, m, []float32{1, 2}))
	})
}

// TestErrors checks the typed errors, which stick in the module.
func TestErrors(t *testing.T) {
	build := func(body func(f *stablehlo.Function)) error {
		m := stablehlo.NewModule("g")
		f := m.Main()
		body(f)
		if !f.Returned() {
			f.Return(f.Constant(0.0))
		}
		_, err := m.Build()
		return err
	}
	cases := []struct {
		name   string
		body   func(f *stablehlo.Function)
		want   error
		phrase string
		op     string
	}{
		{"no_rule", func(f *stablehlo.Function) {
			x := f.Arg(f32(2))
			y := f.CustomCall("my_kernel", []stablehlo.Value{x}, []stablehlo.Shape{f32(2)})[0]
			autodiff.Grad(f, f.Sum(y), x)
		}, autodiff.ErrNotDifferentiable, "custom call @my_kernel has no transpose rule", "stablehlo.custom_call"},
		{"scatter_mul_repeated_updates", func(f *stablehlo.Function) {
			x, u := f.Arg(f32(4, 3)), f.Arg(f32(3, 3))
			d := stablehlo.ScatterDims{UpdateWindowDims: []int{1}, InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}
			y := f.Scatter(x, f.Array([]int32{2, 0, 2}, 3, 1), u, stablehlo.ScatterParams{Dims: d, Combine: stablehlo.Prod})
			autodiff.Grad(f, f.Sum(y), u)
		}, autodiff.ErrNotDifferentiable, "only defined with unique indices", "stablehlo.scatter"},
		{"scatter_func", func(f *stablehlo.Function) {
			x, u := f.Arg(f32(4)), f.Arg(f32(2))
			d := stablehlo.ScatterDims{InsertedWindowDims: []int{0}, ScatterDimsToOperandDims: []int{0}, IndexVectorDim: 1}
			y := f.ScatterFunc(x, f.Array([]int32{2, 0}, 2, 1), u, stablehlo.ScatterParams{Dims: d}, func(g *stablehlo.Function, old, v stablehlo.Value) stablehlo.Value {
				return g.Add(old, g.Mul(v, v))
			})
			autodiff.Grad(f, f.Sum(y), u)
		}, autodiff.ErrNotDifferentiable, "Go combiner", "stablehlo.scatter"},
		{"reduce_window_prod", func(f *stablehlo.Function) {
			x := f.Arg(f32(5))
			y := f.ReduceWindow(x, stablehlo.Prod, stablehlo.ReduceWindowParams{Window: []int{2}})
			autodiff.Grad(f, f.Sum(y), x)
		}, autodiff.ErrNotDifferentiable, "windowed Prod is not differentiable in reverse mode: JAX's generic reduce_window", "stablehlo.reduce_window"},
		{"reduce_window_func", func(f *stablehlo.Function) {
			x := f.Arg(f32(4, 4))
			y := f.ReduceWindowFunc(x, f.Constant(2.0), stablehlo.ReduceWindowParams{Window: []int{3, 2}, Strides: []int{1, 2},
				Padding: stablehlo.Pads([2]int{1, 1}, [2]int{0, 0})}, func(g *stablehlo.Function, acc, v stablehlo.Value) stablehlo.Value {
				return g.Max(acc, v)
			})
			autodiff.Grad(f, f.Sum(y), x)
		}, autodiff.ErrNotDifferentiable, "Go body (ReduceWindowFunc) is not differentiable in reverse mode", "stablehlo.reduce_window"},
		{"jvp_reduce_window_prod", func(f *stablehlo.Function) {
			x := f.Arg(f32(5))
			y := f.ReduceWindow(x, stablehlo.Prod, stablehlo.ReduceWindowParams{Window: []int{2}})
			autodiff.JVP(f, []stablehlo.Value{y}, []stablehlo.Value{x}, []stablehlo.Value{f.Full(f32(5), 1)})
		}, autodiff.ErrNotDifferentiable, "jax.vjp refuses it too", "stablehlo.reduce_window"},
		{"while_unknown_trip_count", func(f *stablehlo.Function) {
			x := f.Arg(f32(2))
			r := f.While([]stablehlo.Value{x}, func(g *stablehlo.Function, c []stablehlo.Value) stablehlo.Value {
				return g.Less(g.Sum(c[0]), g.ConstantOf(dtypes.Float32, 10))
			}, func(g *stablehlo.Function, c []stablehlo.Value) []stablehlo.Value {
				return []stablehlo.Value{g.Mul(c[0], g.Constant(2.0))}
			})
			autodiff.Grad(f, f.Sum(r[0]), x)
		}, autodiff.ErrNotDifferentiable, "needs a known trip count", "stablehlo.while"},
		{"int_input", func(f *stablehlo.Function) {
			x := f.Arg(stablehlo.NewShape(dtypes.Int32, 2))
			autodiff.Grad(f, f.Sum(f.Convert(x, dtypes.Float32)), x)
		}, autodiff.ErrNotFloat, "grad requires real- or complex-valued inputs", "grad"},
		{"int_loss", func(f *stablehlo.Function) {
			x := f.Arg(stablehlo.NewShape(dtypes.Int32, 2))
			autodiff.Grad(f, f.Sum(x), x)
		}, autodiff.ErrNotFloat, "floating-point loss", "grad"},
		{"non_scalar_loss", func(f *stablehlo.Function) {
			x := f.Arg(f32(2))
			autodiff.Grad(f, f.Exp(x), x)
		}, autodiff.ErrCotangent, "scalar-output", "grad"},
		{"cotangent_shape", func(f *stablehlo.Function) {
			x := f.Arg(f32(2))
			autodiff.VJP(f, []stablehlo.Value{f.Exp(x)}, []stablehlo.Value{x}, []stablehlo.Value{f.Full(f32(3), 1)})
		}, autodiff.ErrCotangent, "cotangent 0 is tensor<3xf32>, output 0 is tensor<2xf32>", "vjp"},
		{"foreign_wrt", func(f *stablehlo.Function) {
			g := f.Module().Func("other")
			y := g.Arg(f32(2))
			g.Return(y)
			x := f.Arg(f32(2))
			autodiff.Grad(f, f.Sum(x), y)
		}, autodiff.ErrCotangent, "not a value of this function", "vjp"},
		{"complex_loss", func(f *stablehlo.Function) {
			z := f.Arg(stablehlo.NewShape(dtypes.Complex64, 2))
			autodiff.Grad(f, f.Sum(f.Mul(z, z)), z)
		}, autodiff.ErrNotFloat, "for complex outputs use VJP", "grad"},
		{"clamp_complex", func(f *stablehlo.Function) {
			x := f.Arg(f32(2))
			z := f.Complex(x, x)
			y := f.Clamp(f.ConstantOf(dtypes.Complex64, complex64(0)), z, f.ConstantOf(dtypes.Complex64, complex64(2)))
			autodiff.Grad(f, f.Sum(f.Real(y)), x)
		}, autodiff.ErrNotDifferentiable, "jax.vjp refuses it too", "stablehlo.clamp"},
		{"after_return", func(f *stablehlo.Function) {
			x := f.Arg(f32(2))
			l := f.Sum(x)
			f.Return(l)
			autodiff.Grad(f, l, x)
		}, stablehlo.ErrFunction, "already returned", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := build(tc.body)
			require.Error(t, err)
			require.True(t, errors.Is(err, tc.want), "%v", err)
			require.True(t, strings.Contains(err.Error(), tc.phrase), "%v", err)
			var oe *stablehlo.OpError
			require.True(t, errors.As(err, &oe))
			if tc.op != "" {
				require.Equal(t, tc.op, oe.Op)
			}
		})
	}
}

// TestRegistered lists the rules of the builder's ops.
func TestRegistered(t *testing.T) {
	names := autodiff.Registered()
	for _, want := range []string{"stablehlo.add", "stablehlo.dot_general", "stablehlo.reduce", "func.call", "stablehlo.custom_call"} {
		require.Contains(t, names, want)
	}
}

// JVP, the double VJP: d/dx (x*x*w) . (tx, tw) = 2xw tx + x^2 tw, exactly.
func TestJVP(t *testing.T) {
	c := pjrttest.Client(t)
	m := stablehlo.NewModule("j")
	f := m.Main()
	x, w := f.Arg(f32(3)), f.Arg(f32(3))
	tx, tw := f.Arg(f32(3)), f.Arg(f32(3))
	y := f.Mul(f.Mul(x, x), w)
	z := f.Sum(f.Mul(y, x)) // x^3 w summed: tangent 3x^2 w tx + x^3 tw
	ts := autodiff.JVP(f, []stablehlo.Value{y, z}, []stablehlo.Value{x, w}, []stablehlo.Value{tx, tw})
	f.Return(ts...)
	got := run(t, c, m, []float32{1, 2, 3}, []float32{2, -1, 0.5}, []float32{1, 0, 2}, []float32{0, 1, 1})
	// y: 2xw tx + x^2 tw = [4, 4, 15]; z: sum(3x^2 w tx + x^3 tw) = 6 + 8 + 54 = 68
	require.Equal(t, []any{[]float32{4, 4, 15}, []float32{68}}, got)
}
