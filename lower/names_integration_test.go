package lower_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/internal/lowertest"
	"github.com/xlamesh/xlamesh/internal/reftest"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// acceptedNamePairs are the axis names of the meshes TestIntegrationNameClasses compiles, two
// per mesh: every class of name mesh.New accepts (letters, digits, '_', space, each ASCII
// punctuation character but '\', quotes included), and pairs that differ only where a
// careless escape would merge them.
var acceptedNamePairs = [][2]string{
	{"Data", "model"}, {"0", "123"}, {"_", "__"}, {"a b", "a_b"}, {" ", "  "},
	{"a-b", "a.b"}, {`a"b`, "a'b"}, {`"`, `"2`}, {`"22`, `"0A`}, {"$x", "x$"},
	{"{[(<", ">)]}"}, {"a=b,c:d", "#@%"}, {"!?*+|", "^&/~`;"}, {"x y", "x  y"},
}

// TestIntegrationNameClasses proves the name policy through a real compile: for each pair of
// accepted axis names, a function sharded P(a, b) in and P(b, a) out (so XLA must tell the two
// apart, and move data between them) compiles with Shardy on the devices of lowertest.RealMesh (4x2
// on 8) and every device holds the right shard of 2x+1. A module and a helper function whose names
// need quoting run in the same programs.
func TestIntegrationNameClasses(t *testing.T) {
	c := pjrttest.Client(t)
	rm := lowertest.RealMesh(t, c)
	devs, sizes := rm.Devices(), rm.Abstract().AxisSizes()
	covered := map[byte]bool{}
	for _, pair := range acceptedNamePairs {
		for _, n := range pair {
			for i := range len(n) {
				covered[n[i]] = true
			}
		}
	}
	for ch := byte(0x20); ch < 0x7f; ch++ {
		if ch == '\\' || covered[ch] || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' {
			continue
		}
		t.Errorf("character %q is accepted but no test name uses it", ch)
	}
	for _, pair := range acceptedNamePairs {
		t.Run(mlir.Quote(pair[0])+","+mlir.Quote(pair[1]), func(t *testing.T) {
			m, err := mesh.New(devs, sizes, pair[0], pair[1])
			require.NoError(t, err)
			in := mesh.MustNamedSharding(m, mesh.P(pair[0], pair[1]))
			out := mesh.MustNamedSharding(m, mesh.P(pair[1], pair[0]))
			mod := lower.NewModule("jit_names " + pair[0] + pair[1])
			h := mod.Func("helper-" + pair[1] + "\"'")
			hx := h.Arg(lower.NewShape(dtypes.Float32, 8, 4))
			h.Return(h.Add(h.Mul(hx, h.Constant(2)), h.Constant(1)))
			f := mod.Main()
			x := f.ShardedArg(lower.NewShape(dtypes.Float32, 8, 4), in)
			f.Return(f.Call(h.Function, x)...)
			f.ShardResults(out)
			prog, err := mod.Build()
			require.NoError(t, err)
			require.NoError(t, mlir.Check(prog.Text(), mlir.Partitions(len(devs))))
			x0 := reftest.SmallFloats(32)
			got := lowertest.Run(t, c, m, prog, [][]float32{x0})
			want := make([]float32, 32)
			for i, v := range x0 {
				want[i] = 2*v + 1
			}
			require.Equal(t, want, got[0])
			exe := lowertest.Compile(t, c, m, prog)
			sh, err := exe.OutputShardings()
			require.NoError(t, err)
			// P(b, a) on a 4x2 mesh: rows in 2 tiles along b, columns in 4 along a.
			require.Equal(t, lowertest.Tiles([]int{sizes[1], sizes[0]}, 1), sh[0].TileDims(), "output sharding %v", sh[0])
		})
	}
}

// TestIntegrationRefusedNames: names outside the class never reach XLA: mesh.New refuses
// them, and a module text carrying one is refused by Compile.
func TestIntegrationRefusedNames(t *testing.T) {
	c := pjrttest.Client(t)
	m := lowertest.RealMesh(t, c)
	devs, n := m.Devices(), m.Size()
	for _, name := range []string{"é", "データ", `a\b`, "a\nb", "\x7f", "ok\xff"} {
		_, err := mesh.New(devs, []int{n}, name)
		require.ErrorIs(t, err, mesh.ErrAxisName, "%q", name)
		text := strings.NewReplacer("NAME", mlir.Quote(name), "N", strconv.Itoa(n)).Replace(`module attributes {mhlo.num_partitions = N : i32} {
  sdy.mesh @mesh = <[NAME=N]>
  func.func public @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{NAME}]>}) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  }
}`)
		_, err = c.Compile(text, pjrt.CompileOptions{DeviceAssignment: m.DeviceIDs()})
		require.ErrorIs(t, err, mlir.ErrName, "%q", name)
	}
}
