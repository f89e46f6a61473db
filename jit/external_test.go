package jit_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gomlx/gopjrt/dtypes"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/lower"
	"github.com/xlamesh/xlamesh/lower/wrap"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir/bytecode"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// externalModule is a module written outside xlamesh, sharded on a 4x2 ("x", "y") mesh with a
// sharding constraint: (a + b broadcast, the row sums of that). Integers, so results are exact.
const externalModule = `module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(%arg0: tensor<8x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %arg1: tensor<4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> (tensor<8x4xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8xi32>) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<4xi32>) -> tensor<8x4xi32>
    %1 = stablehlo.add %arg0, %0 : tensor<8x4xi32>
    %2 = sdy.sharding_constraint %1 <@mesh, [{"y"}, {}]> : tensor<8x4xi32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %3 = stablehlo.reduce(%2 init: %c) applies stablehlo.add across dimensions = [1] : (tensor<8x4xi32>, tensor<i32>) -> tensor<8xi32>
    return %2, %3 : tensor<8x4xi32>, tensor<8xi32>
  }
}
`

// externalWant returns the module's results for a = arange(32), b = [100, 200, 300, 400].
func externalWant() ([]int32, []int32) {
	sum := make([]int32, 8)
	out := make([]int32, 32)
	for i := range out {
		out[i] = int32(i) + int32(100*(i%4+1))
		sum[i/4] += out[i]
	}
	return out, sum
}

func callExternal(t *testing.T, c *pjrt.Client, f *jit.Function, m mesh.Mesh, specA, specB mesh.PartitionSpec) ([]*jit.Array, error) {
	t.Helper()
	a, err := jit.Put(c, arange[int32](32), []int{8, 4}, sharding(t, m, specA))
	require.NoError(t, err)
	defer a.Close()
	b, err := jit.Put(c, []int32{100, 200, 300, 400}, []int{4}, sharding(t, m, specB))
	require.NoError(t, err)
	defer b.Close()
	return f.Call(c, a, b)
}

func checkExternal(t *testing.T, out []*jit.Array) {
	t.Helper()
	require.Len(t, out, 2)
	wantOut, wantSum := externalWant()
	got0, err := out[0].ToHost()
	require.NoError(t, err)
	got1, err := out[1].ToHost()
	require.NoError(t, err)
	assert.Equal(t, wantOut, got0)
	assert.Equal(t, wantSum, got1)
	for _, a := range out {
		require.NoError(t, a.Close())
	}
}

// TestFromTextAsWritten runs the module with its own shardings on the 4x2 mesh: the result
// carries the module's sharding, a second call hits both caches, and an argument laid out
// otherwise is refused (or moved, with Reshard). On a mesh of another size the module is
// refused; with fewer than the module's 8 devices only that is checked.
func TestFromTextAsWritten(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	f, err := jit.FromText("f", externalModule)
	require.NoError(t, err)
	defer f.Close()
	// 2x2 on 4 devices or more, the devices there are on fewer.
	small := fitMesh(t, jit.Devices(c), []int{2, 2}, "x", "y")
	refusedOnSmall := func() {
		_, err := callExternal(t, c, f, small, mesh.P("x", "y"), mesh.P())
		require.ErrorIs(t, err, jit.ErrArguments)
		require.ErrorContains(t, err, fmt.Sprintf("the module was written for 8 devices, the arguments are on a mesh of %d", small.Size()))
	}
	if len(c.Devices()) < 8 {
		refusedOnSmall()
		pjrttest.NeedDevices(t, 8) // the module as written
	}
	m := mesh42(t, c)
	for range 2 {
		out, err := callExternal(t, c, f, m, mesh.P("x", "y"), mesh.P())
		require.NoError(t, err)
		assert.True(t, out[0].Sharding().Equal(sharding(t, m, mesh.P("x", nil))), "result 0 sharding %v", out[0].Sharding())
		checkExternal(t, out)
	}
	assert.Equal(t, jit.CacheStats{LoweringHits: 1, LoweringMisses: 1, CompileHits: 1, CompileMisses: 1}, f.Stats())

	_, err = callExternal(t, c, f, m, mesh.P("x"), mesh.P())
	require.ErrorIs(t, err, jit.ErrArguments)
	require.ErrorContains(t, err, "argument 0 is laid out as P('x',); the module expects P('x', 'y')")

	g, err := jit.FromText("f", externalModule, jit.Reshard())
	require.NoError(t, err)
	defer g.Close()
	out, err := callExternal(t, c, g, m, mesh.P("x"), mesh.P())
	require.NoError(t, err)
	checkExternal(t, out)

	refusedOnSmall()
}

// TestFromTextResharded moves the module onto other meshes: 2x4 over the devices in reverse
// order, and 2x1 over two devices; the caller's specs replace the module's. On fewer devices
// the meshes shrink: 2x4 as fitShape makes it, and 2x1 over the first and the last device (1x1
// on one).
func TestFromTextResharded(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	devs := jit.Devices(c)
	rev := fitMeshReversed(t, devs, []int{2, 4}, "x", "y")
	two := []mesh.Device{devs[0]}
	switch {
	case len(devs) >= 6:
		two = []mesh.Device{devs[3], devs[5]}
	case len(devs) >= 2:
		two = []mesh.Device{devs[0], devs[len(devs)-1]}
	}
	var ids []string
	for _, d := range two {
		ids = append(ids, fmt.Sprint(d.ID()))
	}
	for _, tc := range []struct {
		name  string
		devs  []mesh.Device
		shape []int
	}{
		{fmt.Sprintf("%dx%d reversed", axis(t, rev, "x"), axis(t, rev, "y")), rev.Devices(), rev.AxisSizes()},
		{fmt.Sprintf("%dx1 of devices %s", len(two), strings.Join(ids, " and ")), two, []int{len(two), 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mesh.New(tc.devs, tc.shape, "x", "y")
			require.NoError(t, err)
			f, err := jit.FromText("f", externalModule, jit.InSpecs(mesh.P("y", "x"), mesh.P()), jit.OutSpecs(mesh.P("y"), mesh.P("x")))
			require.NoError(t, err)
			defer f.Close()
			out, err := callExternal(t, c, f, m, mesh.P("y", "x"), mesh.P())
			require.NoError(t, err)
			assert.True(t, out[0].Sharding().Equal(sharding(t, m, mesh.P("y"))), "result 0 sharding %v", out[0].Sharding())
			checkExternal(t, out)
		})
	}
}

func TestFromTextErrors(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	ab := fitMesh(t, jit.Devices(c), []int{2, 4}, "a", "b")
	f, err := jit.FromText("f", externalModule, jit.InSpecs(mesh.P("a"), mesh.P()))
	require.NoError(t, err)
	defer f.Close()
	_, err = callExternal(t, c, f, ab, mesh.P("a"), mesh.P())
	require.ErrorIs(t, err, jit.ErrLowering)
	require.ErrorIs(t, err, lower.ErrUnknownAxis)
	require.ErrorContains(t, err, fmt.Sprintf(`names axis "y", which the new mesh <["a"=%d, "b"=%d]> lacks`, axis(t, ab, "a"), axis(t, ab, "b")))

	_, err = jit.FromText("f", "module {}")
	require.ErrorIs(t, err, jit.ErrExternal)
	require.ErrorIs(t, err, wrap.ErrModule)

	_, err = jit.FromBytecode("f", []byte("not bytecode"))
	require.ErrorIs(t, err, jit.ErrExternal)
	_, err = jit.FromBytecode("f", []byte("ML\xefR\x00..."))
	require.ErrorIs(t, err, jit.ErrExternal)
	require.ErrorIs(t, err, bytecode.ErrBytecode)
}

// TestExternalDroppedArguments calls a module that dropped its first argument (as jax.export
// drops unused ones): the caller passes both, the module gets the second, and donating the
// second consumes it.
func TestExternalDroppedArguments(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m := mesh42(t, c)
	const text = `module @jit_g attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=4, "y"=2]>
  func.func public @main(%arg0: tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> (tensor<8xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<8xi32>
    return %0 : tensor<8xi32>
  }
}
`
	i32 := func(n int) lower.Shape { return lower.NewShape(dtypes.Int32, n) }
	opts := []jit.Option{jit.Donate(1)}
	if !is42(m) { // the module as written needs 8 devices: re-sharded onto the mesh there is
		opts = append(opts, jit.InSpecs(mesh.P(), mesh.P("x")), jit.OutSpecs(mesh.P("x")))
	}
	f, err := jit.FromTextDropping("g", text, []lower.Shape{i32(4), i32(8)}, []int{1}, opts...)
	require.NoError(t, err)
	defer f.Close()
	unused, err := jit.Put(c, []int32{9, 9, 9, 9}, []int{4}, sharding(t, m, mesh.P()))
	require.NoError(t, err)
	defer unused.Close()
	x, err := jit.Put(c, arange[int32](8), []int{8}, sharding(t, m, mesh.P("x")))
	require.NoError(t, err)
	out, err := f.Call(c, unused, x)
	require.NoError(t, err)
	got, err := out[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, []int32{0, 2, 4, 6, 8, 10, 12, 14}, got)
	require.NoError(t, out[0].Close())
	assert.True(t, x.IsClosed(), "the donated argument is consumed")
	assert.False(t, unused.IsClosed())

	_, err = f.Call(c, x, unused)
	require.ErrorIs(t, err, jit.ErrArguments)
}

// corpusProgram returns the jax.export artifact and module text of a program of the oracle's
// programs corpus (testdata/oracle/programs.json, written by JAX 0.12).
func corpusProgram(t testing.TB, name string) (artifact []byte, text string) {
	t.Helper()
	return corpusProgramIn(t, "programs.json", name)
}

// corpusProgramIn is corpusProgram for another file of that form (programs081.json: the same
// programs as JAX 0.8.1 exported them).
func corpusProgramIn(t testing.TB, file, name string) (artifact []byte, text string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "oracle", file))
	require.NoError(t, err)
	var corpus struct {
		Programs []struct {
			Name      string `json:"name"`
			Exported  string `json:"exported"`
			StableHLO string `json:"stablehlo"`
		} `json:"programs"`
	}
	require.NoError(t, json.Unmarshal(data, &corpus))
	for _, p := range corpus.Programs {
		if p.Name == name {
			raw, err := base64.StdEncoding.DecodeString(p.Exported)
			require.NoError(t, err)
			return raw, p.StableHLO
		}
	}
	t.Fatalf("no program %q in the corpus", name)
	return nil, ""
}

// cpuOnlyRefusal returns, for an artifact JAX exported for the CPU platform alone called on a
// client of another platform (a GPU), the refusal, wrapping jit.ErrExternal, that Call gives
// there as JAX does; "" where the artifact runs.
func cpuOnlyRefusal(c *pjrt.Client, e *jaxexport.Exported) string {
	if c.Platform() == "cpu" || !slices.Equal(e.Platforms(), []string{"cpu"}) {
		return ""
	}
	return fmt.Sprintf("the module was exported for [cpu], the client runs %s", strings.ToLower(c.Platform()))
}

// TestFromExported runs JAX's "donate" program (2a+b and the column sums of b, argument 0
// donated) from its artifact: as exported and from its module alone (on the artifact's 8
// devices), and re-sharded onto a 2x4 mesh over the devices in reverse order (as fitShape makes
// it on fewer devices). The artifact was exported for cpu: on another platform its call is
// refused (cpuOnlyRefusal).
func TestFromExported(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	raw, _ := corpusProgram(t, "donate")
	e, err := jaxexport.Read(raw)
	require.NoError(t, err)
	assert.Equal(t, "Exported(donate, in=[f32[8,8], f32[8,8]], out=[f32[8,8], f32[8]], 8 devices, cpu)", e.String())
	want0, want1 := make([]float32, 64), make([]float32, 8)
	for i := range want0 {
		want0[i] = 3 * float32(i)
		want1[i%8] += float32(i)
	}
	// run calls f on a = b = arange(64) as [8, 8] laid out by specs a and b on m, and checks and
	// closes the results.
	run := func(t *testing.T, f *jit.Function, m mesh.Mesh, specA, specB mesh.PartitionSpec) {
		t.Helper()
		a, err := jit.Put(c, arange[float32](64), []int{8, 8}, sharding(t, m, specA))
		require.NoError(t, err)
		b, err := jit.Put(c, arange[float32](64), []int{8, 8}, sharding(t, m, specB))
		require.NoError(t, err)
		out, err := f.Call(c, a, b)
		require.NoError(t, err)
		got0, err := out[0].ToHost()
		require.NoError(t, err)
		got1, err := out[1].ToHost()
		require.NoError(t, err)
		assert.Equal(t, want0, got0)
		assert.Equal(t, want1, got1)
		for _, x := range append(out, a, b) {
			require.NoError(t, x.Close())
		}
	}

	t.Run("as exported", func(t *testing.T) {
		c := pjrttest.NeedDevices(t, 8) // the artifact's devices
		m := mesh42(t, c)
		f, err := jit.FromExported(e, jit.Donate(0))
		require.NoError(t, err)
		defer f.Close()
		a, err := jit.Put(c, arange[float32](64), []int{8, 8}, sharding(t, m, mesh.P("x", "y")))
		require.NoError(t, err)
		b, err := jit.Put(c, arange[float32](64), []int{8, 8}, sharding(t, m, mesh.P("x", "y")))
		require.NoError(t, err)
		defer b.Close()
		out, err := f.Call(c, a, b)
		require.NoError(t, err)
		assert.True(t, a.IsClosed(), "argument 0 is donated")
		got0, err := out[0].ToHost()
		require.NoError(t, err)
		got1, err := out[1].ToHost()
		require.NoError(t, err)
		assert.Equal(t, want0, got0)
		assert.Equal(t, want1, got1)
		assert.True(t, out[1].Sharding().Equal(sharding(t, m, mesh.P("y"))), "result 1 sharding %v", out[1].Sharding())
		for _, o := range out {
			require.NoError(t, o.Close())
		}

		// The artifact's module alone (FromBytecode).
		fromCode, err := jit.FromBytecode("donate", e.Module())
		require.NoError(t, err)
		defer fromCode.Close()
		run(t, fromCode, m, mesh.P("x", "y"), mesh.P("x", "y"))
	})

	t.Run("resharded", func(t *testing.T) {
		m24 := fitMeshReversed(t, jit.Devices(c), []int{2, 4}, "x", "y")
		resharded, err := jit.FromExported(e, jit.InSpecs(mesh.P("y", "x"), mesh.P(nil, "y")), jit.OutSpecs(mesh.P("y"), mesh.P()))
		require.NoError(t, err)
		defer resharded.Close()
		if refusal := cpuOnlyRefusal(c, e); refusal != "" {
			a, err := jit.Put(c, arange[float32](64), []int{8, 8}, sharding(t, m24, mesh.P("y", "x")))
			require.NoError(t, err)
			defer a.Close()
			b, err := jit.Put(c, arange[float32](64), []int{8, 8}, sharding(t, m24, mesh.P(nil, "y")))
			require.NoError(t, err)
			defer b.Close()
			out, err := resharded.Call(c, a, b)
			require.ErrorIs(t, err, jit.ErrExternal)
			assert.ErrorContains(t, err, "jit: donate: cannot run external module: "+refusal)
			assert.Nil(t, out)
			assert.False(t, a.IsClosed(), "a refused call donates nothing")
		} else {
			run(t, resharded, m24, mesh.P("y", "x"), mesh.P(nil, "y"))
		}
		prog, err := resharded.Lower(m24.Abstract(), jit.ArgType{Shape: lower.NewShape(dtypes.Float32, 8, 8), Spec: mesh.P("y", "x")},
			jit.ArgType{Shape: lower.NewShape(dtypes.Float32, 8, 8), Spec: mesh.P(nil, "y")})
		require.NoError(t, err)
		// <["x"=2, "y"=4]> on 8 devices.
		assert.Contains(t, prog.Text(), fmt.Sprintf(`sdy.mesh @mesh = <["x"=%d, "y"=%d]>`, axis(t, m24, "x"), axis(t, m24, "y")))
	})
}

// hostArgModule takes its argument in pinned host memory and returns it doubled there (XLA's
// GPU compiler turns the add into host compute, and refuses a result of host compute in device
// memory: "E1200: CompileTimeHostOffloadOutputLocationMismatch").
const hostArgModule = `module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32> {mhlo.memory_kind = "pinned_host"}) -> (tensor<4xf32> {jax.result_info = "result", mhlo.memory_kind = "pinned_host"}) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}`

// TestFromTextArgumentMemory: an argument in another memory than the module's parameter is
// refused, naming both memories (on a GPU, XLA would refuse it at execute), and moved there
// with Reshard. The API 0.81 plugin does not report parameter memories: only the call is checked.
func TestFromTextArgumentMemory(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m, err := mesh.New(jit.Devices(c)[:1], []int{1}, "x")
	require.NoError(t, err)
	a, err := jit.Put(c, []float32{1, 2, 3, 4}, []int{4}, sharding(t, m, mesh.P()))
	require.NoError(t, err)
	defer a.Close()
	_, minor := c.Plugin().APIVersion()
	if minor >= pjrt.MemorySpacesMinor {
		f, err := jit.FromText("f", hostArgModule)
		require.NoError(t, err)
		defer f.Close()
		_, err = f.Call(c, a)
		require.ErrorIs(t, err, jit.ErrArguments)
		assert.ErrorContains(t, err, "argument 0 is in device memory; the module expects it in pinned_host memory (use jit.Reshard to move it)")
	}
	g, err := jit.FromText("f", hostArgModule, jit.Reshard())
	require.NoError(t, err)
	defer g.Close()
	out, err := g.Call(c, a)
	require.NoError(t, err)
	require.Len(t, out, 1)
	defer out[0].Close()
	got, err := out[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8}, got)
	assert.Equal(t, mesh.MemoryDevice, a.Sharding().MemoryKind(), "the caller's array stays where it was")
}

// TestCompilerOptionsReachXLA: jit.CompilerOptions travel with every compile the Function makes;
// XLA refuses a name it does not know, so the call fails naming it, and accepts one it knows.
func TestCompilerOptionsReachXLA(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	m, err := mesh.New(jit.Devices(c)[:1], []int{1}, "x")
	require.NoError(t, err)
	a, err := jit.Put(c, []float32{1, 2, 3, 4}, []int{4}, sharding(t, m, mesh.P()))
	require.NoError(t, err)
	defer a.Close()
	double := func(f *lower.Function, v []lower.Value) []lower.Value { return []lower.Value{f.Add(v[0], v[0])} }
	bad := jit.New("double", double, jit.CompilerOptions(map[string]any{"xla_no_such_option_here": true}))
	defer bad.Close()
	_, err = bad.Call(c, a)
	require.ErrorIs(t, err, pjrt.ErrCompile)
	assert.ErrorContains(t, err, "xla_no_such_option_here")

	opts := map[string]any{"xla_cpu_enable_fast_min_max": false}
	good := jit.New("double", double, jit.CompilerOptions(opts))
	defer good.Close()
	opts["xla_no_such_option_here"] = true // the Function keeps its own copy
	out, err := good.Call(c, a)
	require.NoError(t, err)
	defer out[0].Close()
	got, err := out[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8}, got)
}
