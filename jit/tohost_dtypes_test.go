package jit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/shapes"
)

// TestToHostBytesEveryDType reads arrays of the element types Go has no slice type for, or that
// came late (complex, the float8 family, sub-byte integers), made by a real program on the CPU
// plugin: every read path returns all of the array's bytes, each element as XLA holds it (one
// element a byte for the sub-byte types), and a destination of another length is an error
// wrapping pjrt.ErrHostData, never a short read.
func TestToHostBytesEveryDType(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	c64 := func(re, im float32) []byte { return bytesOf([]complex64{complex(re, im)}) }
	c128 := func(re, im float64) []byte { return bytesOf([]complex128{complex(re, im)}) }
	for _, tc := range []struct {
		mlir, value string
		dtype       dtypes.DType
		elem        []byte // the bytes of one element
	}{
		{"complex<f32>", "(1.0, 2.0)", dtypes.Complex64, c64(1, 2)},
		{"complex<f64>", "(1.0, -2.5)", dtypes.Complex128, c128(1, -2.5)},
		{"f8E5M2", "1.0", dtypes.F8E5M2, []byte{0x3c}},
		{"f8E4M3FN", "1.0", dtypes.F8E4M3FN, []byte{0x38}},
		{"f8E4M3B11FNUZ", "1.0", dtypes.F8E4M3B11FNUZ, []byte{0x58}},
		{"f8E5M2FNUZ", "1.0", dtypes.F8E5M2FNUZ, []byte{0x40}},
		{"f8E4M3FNUZ", "1.0", dtypes.F8E4M3FNUZ, []byte{0x40}},
		{"f8E4M3", "-2.0", dtypes.F8E4M3, []byte{0xc0}},
		{"f8E3M4", "1.0", dtypes.F8E3M4, []byte{0x30}},
		{"f8E8M0FNU", "1.0", dtypes.F8E8M0FNU, []byte{0x7f}},
		{"f4E2M1FN", "-1.0", dtypes.F4E2M1FN, []byte{0x0a}},
		{"i4", "-3", dtypes.S4, []byte{0x0d}},
		{"ui4", "3", dtypes.U4, []byte{0x03}},
		{"i2", "-1", dtypes.S2, []byte{0x03}},
		{"ui2", "1", dtypes.U2, []byte{0x01}},
	} {
		t.Run(tc.mlir, func(t *testing.T) {
			if shapes.Bits(tc.dtype) == 2 && refusesTwoBit(c) {
				// The plugin's XLA aborts on some 2-bit programs: pjrt refuses them all.
				_, err := c.Compile(fmt.Sprintf("module @m {\n  func.func public @main() -> tensor<4x%[1]s> {\n"+
					"    %%0 = stablehlo.constant dense<%[2]s> : tensor<4x%[1]s>\n    return %%0 : tensor<4x%[1]s>\n  }\n}\n",
					tc.mlir, tc.value), pjrt.CompileOptions{DeviceAssignment: []int{c.AddressableDevices()[0].ID()}})
				require.ErrorIs(t, err, pjrt.ErrCompile)
				return
			}
			a := constantArray(t, c, tc.mlir, tc.value)
			defer a.Close()
			require.Equal(t, tc.dtype, a.DType())
			want := bytesRepeat(tc.elem, 4)
			flatBytes := func(what string, flat any, err error) []byte {
				t.Helper()
				require.NoError(t, err, what)
				raw, d, err := pjrt.HostBytes(flat)
				require.NoError(t, err, "%s gives %T", what, flat)
				assert.Equal(t, tc.dtype == dtypes.Complex64 || tc.dtype == dtypes.Complex128, d == tc.dtype, "%s: %T", what, flat)
				return raw
			}
			b, err := a.ToHostBytes()
			require.NoError(t, err)
			assert.Equal(t, want, b, "ToHostBytes")
			flat, err := a.ToHost()
			assert.Equal(t, want, flatBytes("ToHost", flat, err), "ToHost")
			flat, err = a.ToHostContext(context.Background())
			assert.Equal(t, want, flatBytes("ToHostContext", flat, err), "ToHostContext")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			flat, err = a.ToHostContext(ctx)
			assert.Equal(t, want, flatBytes("ToHostContext (cancellable)", flat, err))
			local, _, err := a.ProcessLocalData()
			assert.Equal(t, want, flatBytes("ProcessLocalData", local, err))
			shard := a.AddressableShards()[0].Data
			flat, err = shard.ToHost()
			assert.Equal(t, want, flatBytes("pjrt Buffer.ToHost", flat, err))
			dst := make([]byte, len(want))
			require.NoError(t, shard.CopyToHost(dst))
			assert.Equal(t, want, dst, "pjrt Buffer.CopyToHost")
			for _, n := range []int{0, len(want) - 1, len(want) + 1} {
				err := shard.CopyToHost(make([]byte, n))
				require.Error(t, err, "CopyToHost into %d bytes", n)
				assert.True(t, errors.Is(err, pjrt.ErrHostData), "%v", err)
			}
		})
	}
}

// bytesRepeat returns n copies of elem, one after the other.
func bytesRepeat(elem []byte, n int) []byte {
	var out []byte
	for range n {
		out = append(out, elem...)
	}
	return out
}

// bytesOf returns the memory of a slice as bytes (a copy).
func bytesOf[T any](s []T) []byte {
	raw, _, err := pjrt.HostBytes(s)
	if err != nil {
		panic(err)
	}
	return append([]byte(nil), raw...)
}

// constantArray runs a one-device program returning a constant of element type elem (as
// StableHLO writes it) and shape [4], and wraps its result as a replicated jit array.
func constantArray(t *testing.T, c *pjrt.Client, elem, value string) *jit.Array {
	t.Helper()
	typ := fmt.Sprintf("tensor<4x%s>", elem)
	text := fmt.Sprintf(`module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> %[1]s {
    %%0 = stablehlo.constant dense<%[2]s> : %[1]s
    return %%0 : %[1]s
  }
}
`, typ, value)
	dev := c.AddressableDevices()[0]
	exe, err := c.Compile(text, pjrt.CompileOptions{DeviceAssignment: []int{dev.ID()}})
	require.NoError(t, err, strings.TrimSpace(text))
	defer exe.Close()
	out, err := exe.Execute([][]*pjrt.Buffer{{}})
	require.NoError(t, err)
	m, err := mesh.New(jit.Devices(c)[:1], []int{1}, "x")
	require.NoError(t, err)
	a, err := jit.FromShards(c, []int{4}, sharding(t, m, mesh.P()), out[0])
	if err != nil {
		for _, b := range out[0] {
			b.Close()
		}
	}
	require.NoError(t, err)
	return a
}
