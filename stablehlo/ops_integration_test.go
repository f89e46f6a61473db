package stablehlo_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/internal/reftest"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// program is a built module and its argument types.
type program struct {
	text string
	args []stablehlo.Shape
}

// run1 runs an unsharded program on the client's first device with flat Go slices.
func run1(t *testing.T, c *pjrt.Client, prog program, inputs ...any) []any {
	t.Helper()
	dev := c.Devices()[0]
	exe, err := c.Compile(prog.text, pjrt.CompileOptions{NumPartitions: 1, DeviceAssignment: []int{dev.ID()}})
	require.NoError(t, err, "module:\n%s", prog.text)
	defer exe.Close()
	var args []*pjrt.Buffer
	for i, in := range inputs {
		b, err := c.BufferFromHost(dev, in, prog.args[i].Dims())
		require.NoError(t, err)
		defer b.Close()
		args = append(args, b)
	}
	outs, err := exe.Execute([][]*pjrt.Buffer{args})
	require.NoError(t, err)
	var res []any
	for _, b := range outs[0] {
		h, err := b.ToHost()
		require.NoError(t, err)
		res = append(res, h)
		b.Close()
	}
	return res
}

func seqF32(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(i)
	}
	return out
}

// TestIntegrationOps runs the unsharded op modules and checks every result.
func TestIntegrationOps(t *testing.T) {
	c := pjrttest.Client(t)
	get := func(name string) program {
		for _, gc := range goldenCases {
			if gc.name == name {
				m := stablehlo.NewModule("jit_" + gc.name)
				gc.build(m)
				text, err := m.Build()
				require.NoError(t, err)
				var args []stablehlo.Shape
				for _, a := range m.Main().Args() {
					args = append(args, a.Shape())
				}
				return program{text, args}
			}
		}
		t.Fatalf("no case %s", name)
		return program{}
	}
	t.Run("shape_ops", func(t *testing.T) {
		x := seqF32(6)
		got := run1(t, c, get("shape_ops"), x)
		var b, cc, tr []float32
		for range 4 {
			b = append(b, x...)
		}
		for range 5 {
			cc = append(cc, x...)
		}
		for k := range 3 {
			for range 4 {
				for j := range 2 {
					tr = append(tr, x[j*3+k])
				}
			}
		}
		require.Equal(t, []any{b, cc, tr, tr}, got)
	})
	t.Run("slice_ops", func(t *testing.T) {
		x := seqF32(24)
		got := run1(t, c, get("slice_ops"), x, []int32{2})
		u := seqF32(24)
		u[2], u[3], u[6], u[7] = 9, 10, 13, 14
		require.Equal(t, []any{[]float32{4, 7, 12, 15}, []float32{9, 10, 13, 14}, u}, got)
	})
	t.Run("concat_pad", func(t *testing.T) {
		x, y := seqF32(6), []float32{10, 11, 12}
		got := run1(t, c, get("concat_pad"), x, y)
		cat := append(append(append([]float32{}, x...), y...), x...)
		pad := []float32{
			0, 0, 0, 0, 0,
			0, 1, 2, 0, 0,
			0, 0, 0, 0, 0,
			3, 4, 5, 0, 0,
		}
		pad2 := []float32{
			-1, 3, 4, 5,
			-1, 10, 11, 12,
			-1, 0, 1, 2,
			-1, 3, 4, 5,
		}
		require.Equal(t, []any{cat, pad, pad2}, got)
	})
	t.Run("dot_general", func(t *testing.T) {
		a, b := reftest.SmallFloats(30), reftest.SmallFloats(60)
		got := run1(t, c, get("dot_general"), a, b)
		var batched, outer []float32
		for n := range 3 {
			batched = append(batched, reftest.MatMul(a[n*10:n*10+10], b[n*20:n*20+20], 2, 5, 4)...)
		}
		for _, va := range a {
			for _, vb := range b {
				outer = append(outer, va*vb)
			}
		}
		require.Equal(t, []any{batched, outer}, got)
	})
	t.Run("reduce", func(t *testing.T) {
		x := make([]int32, 24)
		for i := range x {
			x[i] = int32(i%7) - 3
		}
		got := run1(t, c, get("reduce"), x)
		at := func(i, j, k int) int32 { return x[i*12+j*4+k] }
		sum := make([]int32, 3)
		prod := make([]int32, 8)
		mx := make([]int32, 12)
		mn := int32(1 << 30)
		for j := range 3 {
			for k := range 4 {
				mx[j*4+k] = max(at(0, j, k), at(1, j, k))
			}
		}
		for i := range 2 {
			for k := range 4 {
				prod[i*4+k] = at(i, 0, k) * at(i, 1, k) * at(i, 2, k)
			}
			for j := range 3 {
				for k := range 4 {
					sum[j] += at(i, j, k)
					mn = min(mn, at(i, j, k))
				}
			}
		}
		require.Equal(t, []any{sum, prod, mx, []int32{mn}}, got)
	})
	t.Run("iota", func(t *testing.T) {
		got := run1(t, c, get("iota"))
		require.Equal(t, []any{[]int32{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2}, []float32{0, 1, 2, 3, 4}}, got)
	})
	t.Run("compare_select", func(t *testing.T) {
		x := []float32{0.1, 0.7, -1, 0.5}
		i := []int64{1, 3, 5, 3}
		u := []uint32{0, 1, 2, 3}
		got := run1(t, c, get("compare_select"), x, i, u)
		want := []any{[]float32{0.1, 0, -1, 0}, i,
			[]bool{false, true, false, true}, []bool{true, false, true, false}, []bool{true, false, false, false},
			[]bool{true, true, false, true}, []bool{false, false, true, false}, []bool{false, true, true, true},
			[]bool{false, false, true, true}, []bool{true, true, true, true}}
		require.Equal(t, want, got)
	})
	t.Run("bitwise", func(t *testing.T) {
		x, y := []uint8{0x0f, 0xf0, 0xff, 0x00}, []uint8{0x3c, 0x3c, 0x01, 0x01}
		p, q := []bool{true, true, false, false}, []bool{true, false, true, false}
		got := run1(t, c, get("bitwise"), x, y, p, q)
		a := make([]uint8, 4)
		var b []bool
		for k := range 4 {
			a[k] = (x[k] & y[k]) ^ (x[k] | 1)
			b = append(b, (p[k] && q[k]) || (p[k] != true))
		}
		require.Equal(t, []any{a, b}, got)
	})
	t.Run("unary_int", func(t *testing.T) {
		x := []int32{-5, 0, 7, -1}
		got := run1(t, c, get("unary_int"), x, []bool{true, false, true, false})
		// not(sign(abs(neg x))): sign is 1 or 0, so not gives -2 or -1.
		require.Equal(t, []any{[]int32{-2, -1, -2, -2}, []bool{false, true, false, true}}, got)
	})
	t.Run("convert_constants", func(t *testing.T) {
		got := run1(t, c, get("convert_constants"))
		for k := range 13 {
			require.Equal(t, []float32{0, 1, 0, 1}, got[k], "dtype %d", k)
		}
		require.Equal(t, []float32{1.5}, got[13])
		require.Equal(t, []float64{1e300}, got[14])
		require.Equal(t, []float32{0, 0}, got[16])
		require.Equal(t, []float32{1, 2.5, -3e-7}, got[17])
		require.Equal(t, []int64{-9223372036854775808}, got[19])
		require.Equal(t, []uint64{18446744073709551615}, got[20])
		require.Equal(t, []int32{1, 2, 3, 4, 5, 6}, got[21])
		require.Equal(t, []uint16{7}, got[22])
	})
}
