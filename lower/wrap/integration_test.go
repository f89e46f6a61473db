package wrap_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/internal/reftest"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/lower/wrap"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestIntegrationWrap compiles and runs wrapped foreign modules in both modes, sharded on realMesh.
func TestIntegrationWrap(t *testing.T) {
	c := pjrttest.Client(t)
	m := realMesh(t, c)
	x, b := reftest.SmallFloats(16), []float32{10, 20}
	for _, p := range []lower.Partitioner{lower.Shardy, lower.GSPMD} {
		t.Run("jax_export/"+p.String(), func(t *testing.T) {
			prog, err := wrap.Module(jaxExported, []mesh.NamedSharding{on(m, "x", "y"), on(m, "y")}, []mesh.NamedSharding{on(m, "x", "y")},
				wrap.WithPartitioner(p))
			require.NoError(t, err)
			got := run(t, c, m, prog, [][]float32{x, b})
			want := make([]float32, 16)
			for i, v := range x {
				want[i] = v + b[i%2]
			}
			require.Equal(t, [][]float32{want}, got)
		})
		t.Run("bare/"+p.String(), func(t *testing.T) {
			prog, err := wrap.Module(bareModule, []mesh.NamedSharding{on(m, "x")}, []mesh.NamedSharding{on(m, nil, "y")}, wrap.WithPartitioner(p))
			require.NoError(t, err)
			got := run(t, c, m, prog, [][]float32{x})
			want := make([]float32, 16)
			for i, v := range x {
				want[i] = v * v
			}
			require.Equal(t, [][]float32{want}, got)
		})
	}
}

// The integration tests' helpers, as lower's integration tests have them.

// meshSizes returns the sizes (x, y) of the integration tests' mesh on n devices: (4, 2), the
// mesh42 of the golden cases, on 8 or more; on fewer the largest mesh whose sizes divide (4, 2),
// so every array that mesh42 divides stays divisible: (2, 2) on 4 to 7, (2, 1) on 2 or 3, and
// (1, 1) on 1.
func meshSizes(n int) (x, y int) {
	switch {
	case n >= 8:
		return 4, 2
	case n >= 4:
		return 2, 2
	case n >= 2:
		return 2, 1
	}
	return 1, 1
}

// devices returns the first k devices of the client, k at most len(c.Devices()).
func devices(c *pjrt.Client, k int) []mesh.Device {
	var devs []mesh.Device
	for _, d := range c.Devices()[:k] {
		devs = append(devs, d)
	}
	return devs
}

// realMesh returns the ("x", "y") mesh of sizes meshSizes over the client's first devices:
// 4x2 over 8 devices.
func realMesh(t *testing.T, c *pjrt.Client) mesh.Mesh {
	t.Helper()
	x, y := meshSizes(len(c.Devices()))
	m, err := mesh.New(devices(c, x*y), []int{x, y}, "x", "y")
	require.NoError(t, err)
	return m
}

func compile(t *testing.T, c *pjrt.Client, m mesh.Mesh, prog *lower.Program) *pjrt.Executable {
	t.Helper()
	part := pjrt.Shardy
	if prog.Partitioner() == lower.GSPMD {
		part = pjrt.GSPMD
	}
	exe, err := c.Compile(prog.Text(), pjrt.CompileOptions{
		NumPartitions:    prog.NumPartitions(),
		DeviceAssignment: m.DeviceIDs()[:prog.NumPartitions()], // unsharded modules run on one device
		Partitioner:      part,
	})
	require.NoError(t, err, "module:\n%s", prog.Text())
	t.Cleanup(func() { exe.Close() })
	return exe
}

// sliceIndex copies the block idx of a row-major array of shape dims.
func sliceIndex(flat []float32, dims []int, idx mesh.Index) ([]float32, []int) {
	shard := make([]int, len(dims))
	for i, r := range idx {
		shard[i] = r.Len()
	}
	var out []float32
	eachIndex(dims, idx, func(off int) { out = append(out, flat[off]) })
	return out, shard
}

// eachIndex calls fn with the flat offset of every element of block idx, in row-major order.
func eachIndex(dims []int, idx mesh.Index, fn func(off int)) {
	pos := make([]int, len(dims))
	for i, r := range idx {
		pos[i] = r.Start
	}
	for {
		if slices.ContainsFunc(idx, func(r mesh.Range) bool { return r.Len() == 0 }) {
			return
		}
		off := 0
		for i, p := range pos {
			off = off*dims[i] + p
		}
		fn(off)
		k := len(dims) - 1
		for ; k >= 0; k-- {
			pos[k]++
			if pos[k] < idx[k].Stop {
				break
			}
			pos[k] = idx[k].Start
		}
		if k < 0 {
			return
		}
	}
}

// run places the global f32 inputs on the mesh by the program's argument shardings,
// executes, and gathers each result by its result sharding, checking that replicas agree.
func run(t *testing.T, c *pjrt.Client, m mesh.Mesh, prog *lower.Program, inputs [][]float32) [][]float32 {
	t.Helper()
	exe := compile(t, c, m, prog)
	devs := m.Devices()
	args := make([][]*pjrt.Buffer, len(devs))
	for i, in := range inputs {
		s, ok := prog.ArgSharding(i)
		require.True(t, ok, "argument %d has no sharding", i)
		dims := prog.ArgShapes()[i].Dims()
		idx, err := s.DevicesIndicesMap(dims)
		require.NoError(t, err)
		for p, d := range devs {
			data, shard := sliceIndex(in, dims, idx[p])
			b, err := c.BufferFromHost(d.(*pjrt.Device), data, shard)
			require.NoError(t, err)
			t.Cleanup(func() { b.Close() })
			args[p] = append(args[p], b)
		}
	}
	outs, err := exe.Execute(args)
	require.NoError(t, err)
	var results [][]float32
	for j, shape := range prog.ResultShapes() {
		s, ok := prog.ResultSharding(j)
		require.True(t, ok, "result %d has no sharding", j)
		dims := shape.Dims()
		idx, err := s.DevicesIndicesMap(dims)
		require.NoError(t, err)
		global := make([]float32, shape.Size())
		seen := make([]bool, shape.Size())
		for p := range devs {
			host, err := outs[p][j].ToHost()
			require.NoError(t, err)
			data := host.([]float32)
			k := 0
			eachIndex(dims, idx[p], func(off int) {
				if seen[off] {
					require.Equal(t, global[off], data[k], "result %d: replicas disagree at %d (device %d)", j, off, p)
				}
				global[off], seen[off] = data[k], true
				k++
			})
			require.Equal(t, len(data), k, "result %d: shard size on device %d", j, p)
		}
		results = append(results, global)
	}
	for _, row := range outs {
		for _, b := range row {
			b.Close()
		}
	}
	return results
}

// tiles returns the TileDims XLA reports for a sharding with the given tile counts per
// dimension, each tile held by replicas devices: the counts, then replicas when it is over 1
// (last_tile_dim_replicate); none when every count is 1 ({replicated}).
func tiles(counts []int, replicas int) []int {
	if !slices.ContainsFunc(counts, func(k int) bool { return k > 1 }) {
		return nil
	}
	if replicas > 1 {
		return append(slices.Clone(counts), replicas)
	}
	return counts
}
