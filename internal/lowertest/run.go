package lowertest

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// Compile compiles prog with c for the mesh m: with prog's partitioner (Shardy or GSPMD) and
// partition count, on the first prog.NumPartitions() devices of m's device assignment (all of
// them for a sharded program, one for an unsharded one). It fails t, printing the module, when
// the plugin rejects it, and closes the executable when t ends.
func Compile(t testing.TB, c *pjrt.Client, m mesh.Mesh, prog *lower.Program) *pjrt.Executable {
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

// Run compiles prog as Compile does, places the global f32 inputs (row-major, one per argument)
// on m's devices by prog's argument shardings, executes, and gathers each result by its result
// sharding into a global row-major []float32. It fails t when an argument or result has no
// sharding, when replicas of a result disagree, or when a device's shard has another size than
// its sharding says. The argument buffers are closed when t ends, the result buffers before Run
// returns.
func Run(t testing.TB, c *pjrt.Client, m mesh.Mesh, prog *lower.Program, inputs [][]float32) [][]float32 {
	t.Helper()
	exe := Compile(t, c, m, prog)
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
