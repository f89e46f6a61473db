package jit_test

import (
	"errors"
	"fmt"
	"slices"
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

// everyDType returns every element type shapes.Supported names, in dtypes order.
func everyDType() []dtypes.DType {
	var all []dtypes.DType
	for d := range dtypes.DType(64) {
		if shapes.Supported(d) {
			all = append(all, d)
		}
	}
	return all
}

// patternBytes returns n elements of type d as host bytes that use every bit an element may
// hold: bools 0 and 1, sub-byte types every value of their low bits (the rest zero, as NumPy's
// ml_dtypes holds them), and every other type a byte pattern that covers 0 to 255, NaN payloads
// included. With finite, floating-point and complex elements are finite numbers instead: a
// program may quiet a signaling NaN, as XLA does when it copies one.
func patternBytes(d dtypes.DType, n int, finite bool) []byte {
	b := make([]byte, n*shapes.ElementBytes(d))
	for i := range b {
		switch bits := shapes.Bits(d); {
		case d == dtypes.Bool:
			b[i] = byte(i % 2)
		case bits < 8:
			b[i] = byte(i) & (1<<bits - 1)
		case finite && (shapes.IsFloat(d) || shapes.IsComplex(d)):
			b[i] = byte(i*37+11) & 0x3f // the top byte's sign and top exponent bit clear: no NaN, no inf
		default:
			b[i] = byte(i*37 + 11)
		}
	}
	return b
}

// transposedBytes returns the bytes of the [cols, rows] transpose of a row-major [rows, cols]
// array of elem-byte elements.
func transposedBytes(b []byte, rows, cols, elem int) []byte {
	out := make([]byte, len(b))
	for r := range rows {
		for c := range cols {
			copy(out[(c*rows+r)*elem:][:elem], b[(r*cols+c)*elem:][:elem])
		}
	}
	return out
}

// TestAllDTypes moves an [8,4] array of every element type through every path, bytes-exact: into
// the mesh with PutBytes (and Put, for the types Go has), through a program written as text that
// returns it and its transpose, re-sharded over a 4x2 mesh, and back with ToHostBytes, ToHost,
// a shard's pjrt ToHost and CopyToHost; every read returns all the array's bytes. 2-bit arrays
// run with their sharding kept: moving them between devices is refused (see
// TestTwoBitCollectivesRefused); on a plugin older than pjrt.TwoBitMinor their program, and
// that of the 4-bit types (a transpose), is refused before it is compiled.
func TestAllDTypes(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := fitMesh(t, jit.Devices(c), []int{4, 2}, "x", "y")
	for _, d := range everyDType() {
		t.Run(shapes.NumPyName(d), func(t *testing.T) {
			elem := shapes.ElementBytes(d)
			all := patternBytes(d, 32, false)
			a, err := jit.PutBytes(c, d, []int{8, 4}, all, sharding(t, m, mesh.P("x", "y")))
			require.NoError(t, err)
			require.Equal(t, d, a.DType())
			got, err := a.ToHostBytes()
			require.NoError(t, err)
			require.Equal(t, all, got, "PutBytes then ToHostBytes")
			require.NoError(t, a.Close())

			in := patternBytes(d, 32, true)
			a, err = jit.PutBytes(c, d, []int{8, 4}, in, sharding(t, m, mesh.P("x", "y")))
			require.NoError(t, err)
			defer a.Close()

			typ := "tensor<8x4x" + shapes.MLIRName(d) + ">"
			ttyp := "tensor<4x8x" + shapes.MLIRName(d) + ">"
			text := fmt.Sprintf(`module @m {
  func.func public @main(%%arg0: %[1]s) -> (%[1]s, %[2]s) {
    %%0 = stablehlo.transpose %%arg0, dims = [1, 0] : (%[1]s) -> %[2]s
    return %%arg0, %%0 : %[1]s, %[2]s
  }
}
`, typ, ttyp)
			outSpecs := jit.OutSpecs(mesh.P("y", nil), mesh.P(nil, "x"))
			if shapes.Bits(d) == 2 {
				outSpecs = jit.OutSpecs(mesh.P("x", "y"), mesh.P("y", "x"))
			}
			f, err := jit.FromText("f", text, jit.InSpecs(mesh.P("x", "y")), outSpecs)
			require.NoError(t, err)
			defer f.Close()
			out, err := f.Call(c, a)
			if shapes.Bits(d) == 2 && refusesTwoBit(c) {
				require.ErrorIs(t, err, pjrt.ErrCompile, "an old plugin must refuse 2-bit programs before its XLA aborts")
				require.ErrorContains(t, err, "the program has 2-bit integers")
				return
			}
			if shapes.Bits(d) == 4 && refusesTwoBit(c) {
				require.ErrorIs(t, err, pjrt.ErrCompile, "an old plugin must refuse 4-bit transposes before its XLA aborts")
				require.ErrorContains(t, err, "the program transposes a 4-bit type")
				return
			}
			require.NoError(t, err)
			defer func() {
				for _, o := range out {
					o.Close()
				}
			}()
			for i, want := range [][]byte{in, transposedBytes(in, 8, 4, elem)} {
				require.Equal(t, d, out[i].DType())
				got, err := out[i].ToHostBytes()
				require.NoError(t, err)
				require.Equal(t, want, got, "result %d", i)
				flat, err := out[i].ToHost()
				require.NoError(t, err)
				raw, fd, err := pjrt.HostBytes(flat)
				require.NoError(t, err, "ToHost gives %T", flat)
				require.Equal(t, want, raw, "result %d through ToHost (%s)", i, fd)
			}
			shard := out[0].AddressableShards()[0]
			sb, err := shard.Data.ToHost()
			require.NoError(t, err)
			raw, _, err := pjrt.HostBytes(sb)
			require.NoError(t, err)
			assert.Len(t, raw, shard.Data.Shape().Bytes())
			dst := make([]byte, shard.Data.Shape().Bytes())
			require.NoError(t, shard.Data.CopyToHost(dst))
			assert.Equal(t, raw, dst)
			require.Error(t, shard.Data.CopyToHost(make([]byte, len(dst)+1)), "a destination of another length")

			back, err := pjrt.FlatFromBytes(d, all)
			require.NoError(t, err)
			if slices.Contains([]dtypes.DType{dtypes.Complex64, dtypes.Complex128, dtypes.Float32, dtypes.Int64}, d) {
				p, err := jit.Put(c, back, []int{8, 4}, sharding(t, m, mesh.P(nil, "y")))
				require.NoError(t, err)
				defer p.Close()
				got, err := p.ToHostBytes()
				require.NoError(t, err)
				require.Equal(t, all, got, "Put of a %T", back)
			}
		})
	}
}

// TestPutBytesSubByteHighBits refuses sub-byte elements whose unused high bits are set: XLA
// would drop them, and the array read back would not be the bytes given.
func TestPutBytesSubByteHighBits(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := fitMesh(t, jit.Devices(c), []int{2}, "x")
	for _, d := range []dtypes.DType{dtypes.S4, dtypes.U4, dtypes.S2, dtypes.U2, dtypes.F4E2M1FN} {
		in := []byte{1, 2, 3, 0xff}
		_, err := jit.PutBytes(c, d, []int{4}, in, sharding(t, m, mesh.P("x")))
		require.Error(t, err, "%v", d)
		assert.True(t, errors.Is(err, pjrt.ErrHostData), "%v", err)
		assert.ErrorContains(t, err, fmt.Sprintf("element 3 of %s[4] is 0xff", shapes.AvalName(d)))
	}
}

// TestTwoBitCollectivesRefused: a program that would move 2-bit integers between devices is
// refused at compile with an error that names the collective and the type, before XLA runs it
// (JAX 0.12 on the same plugin returns wrong values or corrupts its heap); the same program on
// 4-bit integers runs.
func TestTwoBitCollectivesRefused(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	pjrttest.NeedDevices(t, 2)
	m := fitMesh(t, jit.Devices(c), []int{4, 2}, "x", "y")
	for _, d := range []dtypes.DType{dtypes.U2, dtypes.S2, dtypes.U4} {
		t.Run(shapes.NumPyName(d), func(t *testing.T) {
			in := patternBytes(d, 32, true)
			a, err := jit.PutBytes(c, d, []int{8, 4}, in, sharding(t, m, mesh.P("x", nil)))
			require.NoError(t, err)
			defer a.Close()
			typ := "tensor<8x4x" + shapes.MLIRName(d) + ">"
			text := fmt.Sprintf("module @m {\n  func.func public @main(%%arg0: %[1]s) -> %[1]s {\n    return %%arg0 : %[1]s\n  }\n}\n", typ)
			f, err := jit.FromText("f", text, jit.InSpecs(mesh.P("x", nil)), jit.OutSpecs(mesh.P()))
			require.NoError(t, err)
			defer f.Close()
			out, err := f.Call(c, a)
			if shapes.Bits(d) == 2 && refusesTwoBit(c) {
				require.ErrorIs(t, err, pjrt.ErrCompile)
				assert.ErrorContains(t, err, "the program has 2-bit integers")
				return
			}
			if shapes.Bits(d) == 4 {
				require.NoError(t, err)
				got, err := out[0].ToHostBytes()
				require.NoError(t, err)
				assert.Equal(t, in, got)
				out[0].Close()
				return
			}
			require.ErrorIs(t, err, pjrt.ErrCompile)
			assert.Regexp(t, `all-gather \S+ moves `+shapes.AvalName(d)+`\[\d+,4\] between devices, and XLA's collectives corrupt 2-bit arrays`, err.Error())
		})
	}
}

// refusesTwoBit reports whether c's plugin is older than pjrt.TwoBitMinor, so that pjrt refuses
// programs on 2-bit integers (its XLA aborts compiling some of them).
func refusesTwoBit(c *pjrt.Client) bool {
	_, minor := c.Plugin().APIVersion()
	return minor < pjrt.TwoBitMinor
}
