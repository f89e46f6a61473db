package jit_test

import (
	"fmt"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// blockOf returns the row-major bytes of block idx of a global row-major array.
func blockOf(global []byte, shape []int, idx mesh.Index, elem int) []byte {
	var out []byte
	pos := make([]int, len(shape))
	for d := range pos {
		pos[d] = idx[d].Start
		if idx[d].Stop <= idx[d].Start {
			return nil
		}
	}
	for {
		off := 0
		for d, p := range pos {
			off = off*shape[d] + p
		}
		out = append(out, global[off*elem:(off+1)*elem]...)
		d := len(pos) - 1
		for ; d >= 0; d-- {
			pos[d]++
			if pos[d] < idx[d].Stop {
				break
			}
			pos[d] = idx[d].Start
		}
		if d < 0 {
			return out
		}
	}
}

// TestTransfersExact puts arrays of several element types, shapes and shardings (column splits,
// row splits, both, replicated, splits of an inner dimension, shards of odd widths, a scalar)
// and checks every shard's bytes, and ToHost and ToHostBytes of the whole, exactly; large cases
// take the dense staging route too. Closing gives every buffer and staging block back.
func TestTransfersExact(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	m3 := fitMesh(t, jit.Devices(c), []int{2, 2, 2}, "a", "b", "c")
	type tc struct {
		m     mesh.Mesh
		dtype dtypes.DType
		shape []int
		spec  mesh.PartitionSpec
	}
	var cases []tc
	for _, dt := range []dtypes.DType{dtypes.Float32, dtypes.BFloat16, dtypes.Bool, dtypes.Int8, dtypes.Int64} {
		for _, spec := range []mesh.PartitionSpec{mesh.P("x", "y"), mesh.P("x"), mesh.P(nil, "y"), mesh.P("y", "x"),
			mesh.P(), mesh.P(mesh.Axes("x", "y")), mesh.P(nil, mesh.Axes("y", "x"))} {
			cases = append(cases, tc{m, dt, []int{8, 8}, spec}, tc{m, dt, []int{24, 16}, spec})
		}
		cases = append(cases,
			tc{m, dt, []int{24, 6}, mesh.P("x", "y")}, // shards of 3 columns
			tc{m, dt, []int{12, 6}, mesh.P(nil, "y")},
			tc{m, dt, []int{12, 6}, mesh.P("x", "y")}, // 3 x 3
			tc{m3, dt, []int{4, 6, 12}, mesh.P("c", nil, mesh.Axes("a", "b"))},
			tc{m3, dt, []int{2, 6, 4}, mesh.P(nil, "b", "c")},
			tc{m, dt, []int{}, mesh.P()},
			tc{m, dt, []int{8, 0}, mesh.P("x", "y")})
	}
	// Large enough (f32 512 KiB, shards of 64 KiB and more) for staging every shard densely.
	cases = append(cases, tc{m, dtypes.Float32, []int{512, 256}, mesh.P("x", "y")}, tc{m, dtypes.Float32, []int{512, 256}, mesh.P("x")},
		tc{m, dtypes.Float32, []int{512, 256}, mesh.P()}, tc{m, dtypes.BFloat16, []int{256, 1024}, mesh.P(nil, "y")})
	before := pjrttest.StagingBaseline(t)
	for _, k := range cases {
		t.Run(fmt.Sprintf("%v%v/%v", k.dtype, k.shape, k.spec), func(t *testing.T) {
			elem := k.dtype.Size()
			n := 1
			for _, d := range k.shape {
				n *= d
			}
			host := make([]byte, n*elem)
			for i := range host {
				host[i] = byte(i*7 + i/251)
				if k.dtype == dtypes.Bool {
					host[i] = byte(i % 3 % 2)
				}
			}
			a, err := jit.PutBytes(c, k.dtype, k.shape, host, sharding(t, k.m, k.spec))
			require.NoError(t, err)
			for i, s := range a.AddressableShards() {
				buf := make([]byte, s.Data.Shape().Bytes())
				require.NoError(t, s.Data.CopyToHost(buf))
				require.Equal(t, blockOf(host, k.shape, s.Index, elem), nonNil(buf), "shard %d %v", i, s.Index)
			}
			got, err := a.ToHostBytes()
			require.NoError(t, err)
			require.Equal(t, host, got)
			flat, err := a.ToHost()
			require.NoError(t, err)
			raw, dt, err := pjrt.HostBytes(flat)
			require.NoError(t, err)
			if k.dtype == dtypes.BFloat16 {
				assert.Equal(t, dtypes.Uint16, dt)
			} else {
				assert.Equal(t, k.dtype, dt)
			}
			require.Equal(t, host, raw)
			require.NoError(t, a.Close())
		})
	}
	pjrttest.WaitStaging(t, before)
}

// nonNil turns an empty slice into nil, as blockOf returns for an empty block.
func nonNil(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// TestDonateZeroCopyPut donates arrays whose device buffers live in staging memory (a put on the
// CPU platform) to a computation, repeatedly, checking exact results: the executions may reuse
// that memory for their results, and each staging block goes back to the pool only when the last
// buffer using it is closed; the next put, reusing the blocks, still holds exactly its data.
func TestDonateZeroCopyPut(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	before := pjrttest.StagingBaseline(t)
	f := jit.New("double_donate_big", double, jit.OutSpecs(mesh.P("x", "y")), jit.Donate(0))
	defer f.Close()
	const rows, cols = 256, 128 // 128 KiB, shards of 16 KiB, every one staged (a column split)
	for round := range 3 {
		host := make([]float32, rows*cols)
		for i := range host {
			host[i] = float32(i + round)
		}
		x, err := jit.Put(c, host, []int{rows, cols}, sharding(t, m, mesh.P("x", "y")))
		require.NoError(t, err)
		if c.Platform() == "cpu" {
			assert.Equal(t, before+int64(m.Size()), pjrt.Staging().LiveBlocks, "a block per shard")
		}
		y := x
		for range 3 { // y = 8 * x, each step donating its argument
			outs, err := f.Call(c, y)
			require.NoError(t, err)
			assert.True(t, y.IsClosed())
			y = outs[0]
		}
		// The host data is untouched by the donations.
		assert.Equal(t, float32(5+round), host[5])
		got, err := y.ToHost()
		require.NoError(t, err)
		for i, v := range got.([]float32) {
			if v != 8*host[i] {
				t.Fatalf("round %d: element %d is %v, want %v", round, i, v, 8*host[i])
			}
		}
		require.NoError(t, y.Close())
		pjrttest.WaitStaging(t, before)
	}
}

// TestToHostOfResults reads results of executions (device memory XLA allocated, not staging) on
// every sharding route, exactly, including results of a chain of calls not waited for.
func TestToHostOfResults(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	host := arange[float32](64 * 48)
	for _, spec := range []mesh.PartitionSpec{mesh.P("x", "y"), mesh.P(nil, "y"), mesh.P("x"), mesh.P()} {
		t.Run(spec.String(), func(t *testing.T) {
			x, err := jit.Put(c, host, []int{64, 48}, sharding(t, m, spec))
			require.NoError(t, err)
			defer x.Close()
			inc := jit.New("inc_"+spec.String(), func(f *lower.Function, a []lower.Value) []lower.Value {
				return []lower.Value{f.Add(a[0], f.Constant(1))}
			}, jit.OutSpecs(spec))
			defer inc.Close()
			y := x
			for i := range 10 {
				outs, err := inc.Call(c, y)
				require.NoError(t, err)
				if i > 0 {
					require.NoError(t, y.Close())
				}
				y = outs[0]
			}
			got, err := y.ToHost()
			require.NoError(t, err)
			require.NoError(t, y.Close())
			for i, v := range got.([]float32) {
				if v != host[i]+10 {
					t.Fatalf("element %d is %v, want %v", i, v, host[i]+10)
				}
			}
		})
	}
}
