package lower_test

import (
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/internal/lowertest"
	"github.com/xlamesh/xlamesh/internal/reftest"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
	"github.com/xlamesh/xlamesh/stablehlo"
)

// whileInShardMap builds @main(x: 16x8 sharded ("x", "y")) = shard_map over both axes of
// a stablehlo While whose body calls lower's axis-named AllReduceOver on its region (through
// lower.FunctionOf), three times: acc = max over "x" of acc, plus 1; and a Scan over the
// block's rows whose body sums each row over "y".
func whileInShardMap(m mesh.Mesh, p lower.Partitioner) (*lower.Program, error) {
	mod := lower.NewModule("while_in_shard_map", lower.WithPartitioner(p))
	f := mod.Main()
	s, err := mesh.NewNamedSharding(m, mesh.P("x", "y"))
	if err != nil {
		return nil, err
	}
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, 16, 8), s)
	spec := []mesh.PartitionSpec{mesh.P("x", "y")}
	res := f.ShardMap(m.Abstract(), spec, []mesh.PartitionSpec{mesh.P("x", "y"), mesh.P("x", "y")}, nil,
		func(g *lower.Function, args []lower.Value) []lower.Value {
			r := g.While([]lower.Value{g.Constant(int32(0)), args[0]},
				func(c *stablehlo.Function, carry []lower.Value) lower.Value { return c.Less(carry[0], c.Constant(3)) },
				func(b *stablehlo.Function, carry []lower.Value) []lower.Value {
					lb := lower.FunctionOf(b)
					return []lower.Value{b.Add(carry[0], b.Constant(1)), b.Add(lb.AllReduceOver(carry[1], lower.Max, "x"), b.Constant(1))}
				})
			_, rows := g.Scan(func(b *stablehlo.Function, _, xs []lower.Value) ([]lower.Value, []lower.Value) {
				return nil, []lower.Value{lower.FunctionOf(b).Psum(xs[0], "y")}
			}, nil, args, stablehlo.ScanOptions{})
			return []lower.Value{r[1], rows[0]}
		}, x)
	f.Return(res...)
	f.ShardResults(s, s)
	return mod.Build()
}

// TestIntegrationWhileInShardMap: a While and a Scan inside a shard_map body call axis-named
// collectives; the module compiles and runs on lowertest.RealMesh (4x2 on 8 devices) with both
// partitioners, with the values computed in Go.
func TestIntegrationWhileInShardMap(t *testing.T) {
	c := pjrttest.Client(t)
	m := lowertest.RealMesh(t, c)
	nx, ny := xy(m)
	nr, nc := 16/nx, 8/ny
	in := reftest.SmallFloats(128) // -5..7 repeating: rows differ across "x"
	// Device (ix, iy) holds rows nr*ix..nr*ix+nr-1, columns nc*iy..nc*iy+nc-1 (4x4 blocks on 4x2).
	maxed := make([]float32, 128)
	summed := make([]float32, 128)
	for r := range 16 {
		for col := range 8 {
			mx := in[(r%nr)*8+col]
			for k := range nx {
				mx = max(mx, in[(nr*k+r%nr)*8+col])
			}
			maxed[r*8+col] = mx + 3
			var sum float32
			for k := range ny {
				sum += in[r*8+nc*k+col%nc]
			}
			summed[r*8+col] = sum
		}
	}
	for _, p := range []lower.Partitioner{lower.Shardy, lower.GSPMD} {
		t.Run(p.String(), func(t *testing.T) {
			prog, err := whileInShardMap(m, p)
			require.NoError(t, err)
			require.Contains(t, prog.Text(), `"stablehlo.while"`)
			got := lowertest.Run(t, c, m, prog, [][]float32{in})
			require.Equal(t, [][]float32{maxed, summed}, got)
		})
	}
}

// TestWhileInShardMapCaptures: a loop inside a shard_map body may use the body's values,
// not those of the function outside the (closed) shard_map region.
func TestWhileInShardMapCaptures(t *testing.T) {
	am, err := mesh.NewAbstract([]int{4, 2}, []string{"x", "y"})
	require.NoError(t, err)
	for _, outer := range []bool{false, true} {
		mod := lower.NewModule("t")
		f := mod.Main()
		x := f.Arg(lower.NewShape(dtypes.Float32, 8, 4))
		spec := []mesh.PartitionSpec{mesh.P("x", "y")}
		f.ShardMap(am, spec, spec, nil, func(g *lower.Function, args []lower.Value) []lower.Value {
			local := g.Neg(args[0])
			use := local
			if outer {
				use = x
			}
			return g.ForLoop(2, []lower.Value{args[0]}, func(b *stablehlo.Function, _ lower.Value, carry []lower.Value) []lower.Value {
				return []lower.Value{b.Add(carry[0], use)}
			})
		}, x)
		if outer {
			require.ErrorIs(t, mod.Err(), lower.ErrForeignValue)
		} else {
			require.NoError(t, mod.Err())
		}
	}
}
