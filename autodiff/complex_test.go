package autodiff_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/autodiff"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

func c64(dims ...int) stablehlo.Shape { return stablehlo.NewShape(dtypes.Complex64, dims...) }

// runBytes is run with the inputs given as the raw bytes of the arguments' types (float8
// values, say).
func runBytes(t *testing.T, c *pjrt.Client, m *stablehlo.Module, inputs ...[]byte) []any {
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
		b, err := c.BufferFromBytes(dev, args[i].DType(), args[i].Shape().Dims(), in)
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

// TestComplexAndFloat8 checks exact derivatives through complex and float8 values, with
// JAX's values in comments.
func TestComplexAndFloat8(t *testing.T) {
	c := pjrttest.Client(t)
	t.Run("vjp_complex_mul", func(t *testing.T) {
		// jax.vjp(lambda z: z*z, [1+2j, 3-1j])[1]([1, 1j]) = [2+4j, 2+6j]: no conjugation.
		m := stablehlo.NewModule("g")
		f := m.Main()
		z := f.Arg(c64(2))
		ct := f.Array([]complex64{1, 1i}, 2)
		f.Return(autodiff.VJP(f, []stablehlo.Value{f.Mul(z, z)}, []stablehlo.Value{z}, []stablehlo.Value{ct})...)
		require.Equal(t, []any{[]complex64{2 + 4i, 2 + 6i}}, run(t, c, m, []complex64{1 + 2i, 3 - 1i}))
	})
	t.Run("grad_of_complex_input", func(t *testing.T) {
		// jax.grad(lambda z: jnp.real(jnp.sum(z * jnp.conj(z))))([1+2j, 3-1j]) = [2-4j, 6+2j]
		m := stablehlo.NewModule("g")
		f := m.Main()
		z := f.Arg(c64(2))
		f.Return(autodiff.Grad(f, f.Real(f.Sum(f.Mul(z, f.Conj(z)))), z)...)
		require.Equal(t, []any{[]complex64{2 - 4i, 6 + 2i}}, run(t, c, m, []complex64{1 + 2i, 3 - 1i}))
	})
	t.Run("real_imag_complex", func(t *testing.T) {
		// jax.vjp(lax.real, z)[1](3) = 3+0j; jax.vjp(lax.imag, z)[1](3) = 0-3j;
		// jax.vjp(lax.complex, x, y)[1](3+5j) = (3, -5)
		m := stablehlo.NewModule("g")
		f := m.Main()
		z, x, y := f.Arg(c64()), f.Arg(f32()), f.Arg(f32())
		three := f.ConstantOf(dtypes.Float32, 3)
		gr := autodiff.VJP(f, []stablehlo.Value{f.Real(z)}, []stablehlo.Value{z}, []stablehlo.Value{three})
		gi := autodiff.VJP(f, []stablehlo.Value{f.Imag(z)}, []stablehlo.Value{z}, []stablehlo.Value{three})
		gc := autodiff.VJP(f, []stablehlo.Value{f.Complex(x, y)}, []stablehlo.Value{x, y},
			[]stablehlo.Value{f.ConstantOf(dtypes.Complex64, complex64(3+5i))})
		f.Return(gr[0], gi[0], gc[0], gc[1])
		got := run(t, c, m, []complex64{1 + 2i}, []float32{1}, []float32{2})
		require.Equal(t, []any{[]complex64{3}, []complex64{-3i}, []float32{3}, []float32{-5}}, got)
	})
	t.Run("jvp_through_complex", func(t *testing.T) {
		// jax.jvp(lambda x, w: lax.real(lax.complex(x, w)**2), ([1, 2], [3, -1]), ([1, .5], [2, 1]))
		// = [-10, 4]; jax.jvp(lambda z: z*z, ([1+2j, 3-1j],), ([1, 1j],)) = [2+4j, 2+6j]
		m := stablehlo.NewModule("g")
		f := m.Main()
		x, w, tx, tw := f.Arg(f32(2)), f.Arg(f32(2)), f.Arg(f32(2)), f.Arg(f32(2))
		z, tz := f.Arg(c64(2)), f.Arg(c64(2))
		xw := f.Complex(x, w)
		t1 := autodiff.JVP(f, []stablehlo.Value{f.Real(f.Mul(xw, xw))}, []stablehlo.Value{x, w}, []stablehlo.Value{tx, tw})
		t2 := autodiff.JVP(f, []stablehlo.Value{f.Mul(z, z)}, []stablehlo.Value{z}, []stablehlo.Value{tz})
		f.Return(t1[0], t2[0])
		got := run(t, c, m, []float32{1, 2}, []float32{3, -1}, []float32{1, 0.5}, []float32{2, 1},
			[]complex64{1 + 2i, 3 - 1i}, []complex64{1, 1i})
		require.Equal(t, []any{[]float32{-10, 4}, []complex64{2 + 4i, 2 + 6i}}, got)
	})
	t.Run("float8_mul", func(t *testing.T) {
		// x = [1, -2, 0.5, 3], y = [0.25, 1.5, -4, 2], ct = [1, 2, -0.5, 0.75], all f8E4M3FN:
		// jax.vjp(lax.mul, x, y)[1](ct) = ([0.25, 3, 2, 1.5], [1, -4, -0.25, 2.25]), and
		// jax.grad(lambda x: jnp.sum(x * x))(x) = [2, -4, 1, 6]; the bytes are ml_dtypes'.
		e4 := stablehlo.NewShape(dtypes.F8E4M3FN, 4)
		m := stablehlo.NewModule("g")
		f := m.Main()
		x, y, ct := f.Arg(e4), f.Arg(e4), f.Arg(e4)
		g := autodiff.VJP(f, []stablehlo.Value{f.Mul(x, y)}, []stablehlo.Value{x, y}, []stablehlo.Value{ct})
		l := f.Sum(f.Mul(x, x))
		f.Return(append(g, autodiff.Grad(f, l, x)...)...)
		got := runBytes(t, c, m, []byte{56, 192, 48, 68}, []byte{40, 60, 200, 64}, []byte{56, 64, 176, 52})
		require.Equal(t, []any{[]uint8{40, 68, 64, 60}, []uint8{56, 200, 168, 65}, []uint8{64, 200, 56, 76}}, got)
	})
}
