package lower_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/internal/reftest"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// realMesh returns the 4x2 ("x", "y") mesh over the client's 8 CPU devices.
func realMesh(t *testing.T, c *pjrt.Client) mesh.Mesh {
	t.Helper()
	var devs []mesh.Device
	for _, d := range c.Devices() {
		devs = append(devs, d)
	}
	require.GreaterOrEqual(t, len(devs), 8, "integration tests need 8 CPU devices")
	m, err := mesh.New(devs[:8], []int{4, 2}, "x", "y")
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

// TestIntegrationCompileGolden compiles every golden module, in each mode it has, with the
// real CPU plugin on 8 devices.
func TestIntegrationCompileGolden(t *testing.T) {
	c := pjrttest.Client(t)
	m := realMesh(t, c)
	for _, gc := range goldenCases {
		for _, p := range partitioners(gc) {
			t.Run(gc.name+"/"+p.String(), func(t *testing.T) {
				prog, err := build(gc, p)
				require.NoError(t, err)
				exe := compile(t, c, m, prog)
				require.Equal(t, prog.NumPartitions(), exe.NumPartitions())
			})
		}
	}
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

// numeric holds, per golden case, inputs and the expected results computed in Go.
var numeric = map[string]struct {
	inputs func() [][]float32
	want   func(in [][]float32) [][]float32
	tol    float64
}{
	"seed": {
		inputs: func() [][]float32 {
			x := make([]float32, 16)
			for i := range x {
				x[i] = float32(i)
			}
			return [][]float32{x}
		},
		want: func(in [][]float32) [][]float32 {
			out := make([]float32, 16)
			for i, v := range in[0] {
				out[i] = 2 * v
			}
			return [][]float32{out}
		},
	},
	"matmul_batch":      matmulNumeric,
	"matmul_model":      matmulNumeric,
	"matmul_2d":         matmulNumeric,
	"matmul_replicated": matmulNumeric,
	"reduce_sharded_axis": {
		inputs: func() [][]float32 { return [][]float32{reftest.SmallFloats(128)} },
		want: func(in [][]float32) [][]float32 {
			x := in[0]
			sum0 := make([]float32, 8)
			max1 := make([]float32, 16)
			minAll := float32(math.Inf(1))
			for i := range 16 {
				max1[i] = float32(math.Inf(-1))
				for j := range 8 {
					v := x[i*8+j]
					sum0[j] += v
					max1[i] = max(max1[i], v)
					minAll = min(minAll, v)
				}
			}
			return [][]float32{sum0, max1, {minAll}}
		},
	},
	"constraint": {
		inputs: func() [][]float32 { return [][]float32{reftest.SmallFloats(128)} },
		want: func(in [][]float32) [][]float32 {
			out := make([]float32, 128)
			for i, v := range in[0] {
				y := float32(math.Tanh(float64(v)))
				out[i] = (y + 1) * y
			}
			return [][]float32{out}
		},
		tol: 1e-6,
	},
	"shard_map_sum": {
		inputs: func() [][]float32 { return [][]float32{reftest.SmallFloats(128)} },
		want: func(in [][]float32) [][]float32 {
			var total float32
			blocks := make([]float32, 8)
			for i := range 16 {
				for j := range 8 {
					v := in[0][i*8+j]
					total += v
					blocks[(i/4)*2+j/4] += v
				}
			}
			return [][]float32{{total}, blocks}
		},
	},
	"call": {
		inputs: func() [][]float32 { return [][]float32{reftest.SmallFloats(16)} },
		want: func(in [][]float32) [][]float32 {
			out := make([]float32, 16)
			for i, v := range in[0] {
				out[i] = 2*v - v
			}
			return [][]float32{out}
		},
	},
	"shard_map_partial": {
		inputs: func() [][]float32 { return [][]float32{reftest.SmallFloats(128)} },
		want: func(in [][]float32) [][]float32 {
			out := make([]float32, 128)
			for i, v := range in[0] {
				out[i] = 3 * v
			}
			return [][]float32{out}
		},
	},
	"collectives": {
		inputs: func() [][]float32 { return [][]float32{reftest.SmallFloats(128)} },
		want:   wantCollectives,
	},
	"nested_shard_map": {
		inputs: func() [][]float32 { return [][]float32{reftest.SmallFloats(128)} },
		want: func(in [][]float32) [][]float32 {
			// Every 4x4 block becomes the elementwise sum of all eight blocks.
			var s [4][4]float32
			for i := range 16 {
				for j := range 8 {
					s[i%4][j%4] += in[0][i*8+j]
				}
			}
			out := make([]float32, 128)
			for i := range 16 {
				for j := range 8 {
					out[i*8+j] = s[i%4][j%4]
				}
			}
			return [][]float32{out}
		},
	},
}

var matmulNumeric = struct {
	inputs func() [][]float32
	want   func(in [][]float32) [][]float32
	tol    float64
}{
	inputs: func() [][]float32 { return [][]float32{reftest.SmallFloats(128), reftest.SmallFloats(32)} },
	want:   func(in [][]float32) [][]float32 { return [][]float32{reftest.MatMul(in[0], in[1], 16, 8, 4)} },
}

// wantCollectives computes the collectives case on the 16x8 input sharded ("x", "y"):
// device (ix, iy) holds block rows 4ix..4ix+3, columns 4iy..4iy+3.
func wantCollectives(in [][]float32) [][]float32 {
	x := in[0]
	block := func(ix, iy int) [][]float32 { // 4x4
		b := make([][]float32, 4)
		for r := range 4 {
			b[r] = slices.Clone(x[(4*ix+r)*8+4*iy : (4*ix+r)*8+4*iy+4])
		}
		return b
	}
	// all_gather over y along dim 1: the 4x8 rows of x; out P("x") -> 16x8 == x.
	gathered := slices.Clone(x)
	// reduce_scatter over x along dim 0: device (ix, iy) gets row ix of sum_ix' block(ix', iy);
	// out P("x", "y") assembles 4x8: row ix, columns of y-block iy.
	scattered := make([]float32, 4*8)
	for ix := range 4 {
		for iy := range 2 {
			for c := range 4 {
				var s float32
				for k := range 4 {
					s += block(k, iy)[ix][c]
				}
				scattered[ix*8+4*iy+c] = s
			}
		}
	}
	// all_to_all over y: split dim 0 (4 rows) in 2, concat along dim 1:
	// device iy gets rows [2iy, 2iy+2) of block(ix, 0) then of block(ix, 1) side by side: 2x8.
	// out P("x", "y") on 8x16: rows 2ix+..., columns 8iy...
	swapped := make([]float32, 8*16)
	for ix := range 4 {
		for iy := range 2 {
			for r := range 2 {
				for src := range 2 {
					for c := range 4 {
						swapped[(2*ix+r)*16+8*iy+4*src+c] = block(ix, src)[2*iy+r][c]
					}
				}
			}
		}
	}
	// collective_permute over x: ix sends to ix+1 mod 4, so device ix holds block(ix-1, iy).
	shifted := make([]float32, 16*8)
	maxed := make([]float32, 16*8)
	for ix := range 4 {
		for iy := range 2 {
			src := block((ix+3)%4, iy)
			for r := range 4 {
				for c := range 4 {
					shifted[(4*ix+r)*8+4*iy+c] = src[r][c]
					maxed[(4*ix+r)*8+4*iy+c] = max(block(ix, 0)[r][c], block(ix, 1)[r][c])
				}
			}
		}
	}
	return [][]float32{gathered, scattered, swapped, shifted, maxed}
}

// TestIntegrationNumeric runs the numeric golden cases on 8 CPU devices in Shardy and GSPMD
// mode and compares with results computed in Go.
func TestIntegrationNumeric(t *testing.T) {
	c := pjrttest.Client(t)
	m := realMesh(t, c)
	for _, gc := range goldenCases {
		nc, ok := numeric[gc.name]
		if !ok {
			continue
		}
		for _, p := range partitioners(gc) {
			t.Run(gc.name+"/"+p.String(), func(t *testing.T) {
				prog, err := build(gc, p)
				require.NoError(t, err)
				in := nc.inputs()
				got := run(t, c, m, prog, in)
				want := nc.want(in)
				require.Len(t, got, len(want))
				for i := range want {
					if nc.tol == 0 {
						require.Equal(t, want[i], got[i], "result %d", i)
						continue
					}
					require.InDeltaSlice(t, want[i], got[i], nc.tol, "result %d", i)
				}
			})
		}
	}
	for _, name := range []string{"seed", "matmul_batch", "matmul_model", "matmul_2d", "matmul_replicated",
		"reduce_sharded_axis", "constraint", "shard_map_sum"} {
		require.Contains(t, numeric, name, fmt.Sprintf("acceptance case %s has a numeric check", name))
	}
}

// TestIntegrationWrap compiles and runs wrapped foreign modules in both modes.
func TestIntegrationWrap(t *testing.T) {
	c := pjrttest.Client(t)
	m := realMesh(t, c)
	x, b := reftest.SmallFloats(16), []float32{10, 20}
	for _, p := range []lower.Partitioner{lower.Shardy, lower.GSPMD} {
		t.Run("jax_export/"+p.String(), func(t *testing.T) {
			prog, err := lower.Wrap(jaxExported, []mesh.NamedSharding{ns("x", "y"), ns("y")}, []mesh.NamedSharding{ns("x", "y")},
				lower.WithPartitioner(p))
			require.NoError(t, err)
			got := run(t, c, m, prog, [][]float32{x, b})
			want := make([]float32, 16)
			for i, v := range x {
				want[i] = v + b[i%2]
			}
			require.Equal(t, [][]float32{want}, got)
		})
		t.Run("bare/"+p.String(), func(t *testing.T) {
			prog, err := lower.Wrap(bareModule, []mesh.NamedSharding{ns("x")}, []mesh.NamedSharding{ns(nil, "y")}, lower.WithPartitioner(p))
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
