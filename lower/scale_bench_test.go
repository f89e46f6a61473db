package lower_test

import (
	"strconv"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
)

// scaleCollectives lowers and prints, for an abstract (n/8, 8) mesh ("x", "y"), a shard_map
// over an (n/8, 8) f32 array P("x", "y") whose body sends each shard one step around the ring
// along "x" (ppermute) and then psums it over "x" ten times: the collectives row of issue 31's
// scale table (tools/bench/jax_scale.py lowers the same function with jax.jit).
func scaleCollectives(n int) (*lower.Program, error) {
	rows := n / 8
	abs, err := mesh.NewAbstract([]int{rows, 8}, []string{"x", "y"})
	if err != nil {
		return nil, err
	}
	s, err := mesh.NewAbstractSharding(abs, mesh.P("x", "y"))
	if err != nil {
		return nil, err
	}
	ring := make([][2]int, rows)
	for i := range ring {
		ring[i] = [2]int{i, (i + 1) % rows}
	}
	m := lower.NewModule("collectives")
	f := m.Main()
	x := f.ShardedArg(lower.NewShape(dtypes.Float32, rows, 8), s)
	out := f.ShardMap(abs, []mesh.PartitionSpec{mesh.P("x", "y")}, []mesh.PartitionSpec{mesh.P(nil, "y")}, nil,
		func(g *lower.Function, args []lower.Value) []lower.Value {
			v := g.Ppermute(args[0], ring, "x")
			for range 10 {
				v = g.Psum(v, "x")
			}
			return []lower.Value{v}
		}, x)
	f.Return(out...)
	return m.Build()
}

// scaleBallast is live heap held while the scale benchmark runs, as mesh's scale benchmarks
// hold it (see there): 64 MiB, so that Go's 4 MiB minimum heap target does not bend the growth.
var scaleBallast []byte

// BenchmarkScaleCollectivesLowering: scaleCollectives at 8, 512, 8,192 and 65,536 devices.
func BenchmarkScaleCollectivesLowering(b *testing.B) {
	if scaleBallast == nil {
		scaleBallast = make([]byte, 64<<20)
	}
	for _, n := range []int{8, 512, 8192, 65536} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := scaleCollectives(n)
				if err != nil {
					b.Fatal(err)
				}
				_ = p.Text()
			}
		})
	}
}
