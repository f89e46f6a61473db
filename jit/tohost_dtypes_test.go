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
)

// TestToHostUnreadableDTypes reads arrays of every element type pjrt cannot read yet (complex,
// the float8 family, sub-byte integers), made by a real program on the CPU plugin: each read
// path returns an error wrapping pjrt.ErrHostData that names the type, never fewer bytes than
// the array holds.
func TestToHostUnreadableDTypes(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	for _, tc := range []struct {
		mlir, value string
		dtype       dtypes.DType
	}{
		{"complex<f32>", "(1.0, 2.0)", dtypes.Complex64},
		{"complex<f64>", "(1.0, 2.0)", dtypes.Complex128},
		{"f8E5M2", "1.0", dtypes.F8E5M2},
		{"f8E4M3FN", "1.0", dtypes.F8E4M3FN},
		{"f8E4M3B11FNUZ", "1.0", dtypes.F8E4M3B11FNUZ},
		{"f8E5M2FNUZ", "1.0", dtypes.F8E5M2FNUZ},
		{"f8E4M3FNUZ", "1.0", dtypes.F8E4M3FNUZ},
		{"i4", "3", dtypes.S4},
		{"ui4", "3", dtypes.U4},
		{"i2", "1", dtypes.S2},
		{"ui2", "1", dtypes.U2},
	} {
		t.Run(tc.mlir, func(t *testing.T) {
			a := constantArray(t, c, tc.mlir, tc.value)
			defer a.Close()
			require.Equal(t, tc.dtype, a.DType())
			name := tc.dtype.String()
			check := func(what string, n int, err error) {
				t.Helper()
				require.Error(t, err, "%s of %s returned %d bytes and no error", what, tc.mlir, n)
				assert.True(t, errors.Is(err, pjrt.ErrHostData), "%s: %v", what, err)
				assert.Contains(t, err.Error(), name, what)
			}
			b, err := a.ToHostBytes()
			check("ToHostBytes", len(b), err)
			_, err = a.ToHost()
			check("ToHost", -1, err)
			_, err = a.ToHostContext(context.Background())
			check("ToHostContext", -1, err)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err = a.ToHostContext(ctx)
			check("ToHostContext with a cancellable context", -1, err)
			_, _, err = a.ProcessLocalData()
			check("ProcessLocalData", -1, err)
			shard := a.AddressableShards()[0].Data
			_, err = shard.ToHost()
			check("pjrt Buffer.ToHost", -1, err)
			err = shard.CopyToHost(make([]byte, 64))
			check("pjrt Buffer.CopyToHost", -1, err)
		})
	}
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
