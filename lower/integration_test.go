package lower_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/internal/lowertest"
	"github.com/xlamesh/xlamesh/internal/reftest"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// xy returns the sizes of the axes "x" and "y" of m.
func xy(m mesh.Mesh) (x, y int) {
	s := m.Abstract().AxisSizes()
	return s[0], s[1]
}

// TestIntegrationCompileGolden compiles every golden module, in each mode it has, with the
// client's plugin, built on lowertest.RealMesh (the golden mesh42 on 8 devices).
func TestIntegrationCompileGolden(t *testing.T) {
	c := pjrttest.Client(t)
	m := lowertest.RealMesh(t, c)
	for _, gc := range goldenCases {
		for _, p := range partitioners(gc) {
			t.Run(gc.name+"/"+p.String(), func(t *testing.T) {
				prog, err := buildOn(gc, p, m)
				require.NoError(t, err)
				exe := lowertest.Compile(t, c, m, prog)
				require.Equal(t, prog.NumPartitions(), exe.NumPartitions())
			})
		}
	}
}

// numeric holds, per golden case, inputs and the expected results computed in Go.
var numeric = map[string]struct {
	inputs func() [][]float32
	want   func(in [][]float32, m mesh.Mesh) [][]float32 // m: the mesh the case was built on
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
		want: func(in [][]float32, _ mesh.Mesh) [][]float32 {
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
		want: func(in [][]float32, _ mesh.Mesh) [][]float32 {
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
		want: func(in [][]float32, _ mesh.Mesh) [][]float32 {
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
		want: func(in [][]float32, m mesh.Mesh) [][]float32 {
			// Device (ix, iy) sums its (16/X)x(8/Y) block; the blocks assemble to XxY.
			nx, ny := xy(m)
			var total float32
			blocks := make([]float32, nx*ny)
			for i := range 16 {
				for j := range 8 {
					v := in[0][i*8+j]
					total += v
					blocks[(i/(16/nx))*ny+j/(8/ny)] += v
				}
			}
			return [][]float32{{total}, blocks}
		},
	},
	"call": {
		inputs: func() [][]float32 { return [][]float32{reftest.SmallFloats(16)} },
		want: func(in [][]float32, _ mesh.Mesh) [][]float32 {
			out := make([]float32, 16)
			for i, v := range in[0] {
				out[i] = 2*v - v
			}
			return [][]float32{out}
		},
	},
	"shard_map_partial": {
		inputs: func() [][]float32 { return [][]float32{reftest.SmallFloats(128)} },
		want: func(in [][]float32, _ mesh.Mesh) [][]float32 {
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
		want: func(in [][]float32, m mesh.Mesh) [][]float32 {
			// Every (16/X)x(8/Y) block (4x4 on 4x2) becomes the elementwise sum of all X*Y blocks.
			nx, ny := xy(m)
			br, bc := 16/nx, 8/ny
			s := make([]float32, br*bc)
			for i := range 16 {
				for j := range 8 {
					s[(i%br)*bc+j%bc] += in[0][i*8+j]
				}
			}
			out := make([]float32, 128)
			for i := range 16 {
				for j := range 8 {
					out[i*8+j] = s[(i%br)*bc+j%bc]
				}
			}
			return [][]float32{out}
		},
	},
}

var matmulNumeric = struct {
	inputs func() [][]float32
	want   func(in [][]float32, m mesh.Mesh) [][]float32 // m: the mesh the case was built on
	tol    float64
}{
	inputs: func() [][]float32 { return [][]float32{reftest.SmallFloats(128), reftest.SmallFloats(32)} },
	want: func(in [][]float32, _ mesh.Mesh) [][]float32 {
		return [][]float32{reftest.MatMul(in[0], in[1], 16, 8, 4)}
	},
}

// wantCollectives computes the collectives case on the 16x8 input sharded ("x", "y") over an
// X x Y mesh m (4x2 as mesh42): device (ix, iy) holds the R x C block of rows R*ix..R*ix+R-1,
// columns C*iy..C*iy+C-1, with R = 16/X and C = 8/Y (4x4 on 4x2).
func wantCollectives(in [][]float32, m mesh.Mesh) [][]float32 {
	x := in[0]
	nx, ny := xy(m)
	nr, nc := 16/nx, 8/ny
	block := func(ix, iy int) [][]float32 { // R x C
		b := make([][]float32, nr)
		for r := range nr {
			b[r] = slices.Clone(x[(nr*ix+r)*8+nc*iy : (nr*ix+r)*8+nc*iy+nc])
		}
		return b
	}
	// all_gather over y along dim 1: the R x 8 rows of x; out P("x") -> 16x8 == x.
	gathered := slices.Clone(x)
	// reduce_scatter over x along dim 0: device (ix, iy) gets rows [ix*R/X, (ix+1)*R/X) of
	// sum_ix' block(ix', iy); out P("x", "y") assembles R x 8 (4x8 on 4x2): row r, column c is
	// the sum over the row blocks k of x[k*R + r, c].
	scattered := make([]float32, nr*8)
	for r := range nr {
		for c := range 8 {
			for k := range nx {
				scattered[r*8+c] += x[(nr*k+r)*8+c]
			}
		}
	}
	// all_to_all over y: split dim 0 (R rows) in Y, concat along dim 1: device iy gets rows
	// [iy*R/Y, (iy+1)*R/Y) of block(ix, 0), ..., block(ix, Y-1) side by side: (R/Y) x 8.
	// out P("x", "y") on (16/Y) x 8Y (8x16 on 4x2): rows (R/Y)*ix+..., columns 8*iy...
	rs := nr / ny
	swapped := make([]float32, 16*8)
	for ix := range nx {
		for iy := range ny {
			for r := range rs {
				for src := range ny {
					for c := range nc {
						swapped[(rs*ix+r)*8*ny+8*iy+nc*src+c] = block(ix, src)[rs*iy+r][c]
					}
				}
			}
		}
	}
	// collective_permute over x: ix sends to ix+1 mod X, so device ix holds block(ix-1, iy).
	// all_reduce max over y: each element the max over the blocks of its row of blocks.
	shifted := make([]float32, 16*8)
	maxed := make([]float32, 16*8)
	for ix := range nx {
		for iy := range ny {
			src := block((ix+nx-1)%nx, iy)
			for r := range nr {
				for c := range nc {
					shifted[(nr*ix+r)*8+nc*iy+c] = src[r][c]
					mx := block(ix, 0)[r][c]
					for k := range ny {
						mx = max(mx, block(ix, k)[r][c])
					}
					maxed[(nr*ix+r)*8+nc*iy+c] = mx
				}
			}
		}
	}
	return [][]float32{gathered, scattered, swapped, shifted, maxed}
}

// TestIntegrationNumeric runs the numeric golden cases, built on lowertest.RealMesh (the golden
// mesh42 on 8 devices), in Shardy and GSPMD mode and compares with results computed in Go.
func TestIntegrationNumeric(t *testing.T) {
	c := pjrttest.Client(t)
	m := lowertest.RealMesh(t, c)
	for _, gc := range goldenCases {
		nc, ok := numeric[gc.name]
		if !ok {
			continue
		}
		for _, p := range partitioners(gc) {
			t.Run(gc.name+"/"+p.String(), func(t *testing.T) {
				prog, err := buildOn(gc, p, m)
				require.NoError(t, err)
				in := nc.inputs()
				got := lowertest.Run(t, c, m, prog, in)
				want := nc.want(in, m)
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
