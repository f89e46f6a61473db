package jit_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// program012 is one program of testdata/oracle/export012.json, written by JAX 0.12.0.1
// (tools/oracle/export012.sh): the artifact and JAX's inputs and outputs.
type program012 struct {
	Name     string
	Exported string
	Inputs   []struct {
		Shape  []int
		Values []float32
	}
	Outputs []struct {
		Shape  []int
		Values []float32
	}
}

func export012(t testing.TB, name string) (*jaxexport.Exported, program012) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "oracle", "export012.json"))
	require.NoError(t, err)
	var f struct{ Programs []program012 }
	require.NoError(t, json.Unmarshal(data, &f))
	for _, p := range f.Programs {
		if p.Name == name {
			raw, err := base64.StdEncoding.DecodeString(p.Exported)
			require.NoError(t, err)
			e, err := jaxexport.Read(raw)
			require.NoError(t, err)
			return e, p
		}
	}
	t.Fatalf("no program %q in export012.json", name)
	return nil, program012{}
}

// mesh012 returns the ("X", "Y") mesh of a case of the export012 tests: "2x4", the artifacts'
// own mesh over the first 8 devices; "2x4 reversed", the same over them in reverse order (both
// need 8 devices); "4x2 reversed", a 4x2 mesh over the devices in reverse order, as fitShape
// makes it on fewer.
func mesh012(t testing.TB, c *pjrt.Client, name string) mesh.Mesh {
	t.Helper()
	devs := jit.Devices(c)
	switch name {
	case "2x4":
		return fitMesh(t, devs[:8], []int{2, 4}, "X", "Y")
	case "2x4 reversed":
		return fitMeshReversed(t, devs[:8], []int{2, 4}, "X", "Y")
	case "4x2 reversed":
		return fitMeshReversed(t, devs, []int{4, 2}, "X", "Y")
	}
	t.Fatalf("no mesh %q", name)
	return mesh.Mesh{}
}

// TestFromExported012 runs JAX 0.12's version 12 artifacts (named shardings on a 2x4 ("X", "Y")
// mesh) as exported and re-sharded, and compares with JAX's results. The artifacts as exported,
// and shard_map_psum, whose shard_map body is typed for the 2x4 mesh, need 8 devices; times2
// re-sharded runs on the devices there are, where its platforms allow (cpuOnlyRefusal).
func TestFromExported012(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	for _, tc := range []struct {
		name     string
		reshard  []jit.Option
		m        string // see mesh012
		in       mesh.PartitionSpec
		resultSh mesh.PartitionSpec // the sharding of the result, on m
	}{
		{"times2_2x4", nil, "2x4", mesh.P("X", "Y"), mesh.P("X", "Y")},
		{"times2_2x4", []jit.Option{jit.InSpecs(mesh.P("Y", "X")), jit.OutSpecs(mesh.P("Y"))}, "4x2 reversed", mesh.P("Y", "X"), mesh.P("Y")},
		{"shard_map_psum", nil, "2x4", mesh.P("X", "Y"), mesh.P("X", nil)},
		{"shard_map_psum", []jit.Option{jit.InSpecs(mesh.P("X", "Y")), jit.OutSpecs(mesh.P("X", nil))}, "2x4 reversed", mesh.P("X", "Y"), mesh.P("X", nil)},
		{"times2_cpu_cuda", nil, "2x4", mesh.P("X", "Y"), mesh.P("X", "Y")},
		{"times2_cuda_nocheck", nil, "2x4", mesh.P("X", "Y"), mesh.P("X", "Y")}, // platform check disabled at export
		{"times2_cpu_cuda", []jit.Option{jit.InSpecs(mesh.P("Y", "X")), jit.OutSpecs(mesh.P("Y"))}, "4x2 reversed", mesh.P("Y", "X"), mesh.P("Y")},
	} {
		name := tc.name
		if tc.reshard != nil {
			name += "/resharded"
		}
		t.Run(name, func(t *testing.T) {
			if tc.m != "4x2 reversed" {
				pjrttest.NeedDevices(t, 8) // the artifact's 2x4 mesh
			}
			m := mesh012(t, c, tc.m)
			e, p := export012(t, tc.name)
			f, err := jit.FromExported(e, tc.reshard...)
			require.NoError(t, err)
			defer f.Close()
			x, err := jit.Put(c, p.Inputs[0].Values, p.Inputs[0].Shape, sharding(t, m, tc.in))
			require.NoError(t, err)
			defer x.Close()
			out, err := f.Call(c, x)
			if refusal := cpuOnlyRefusal(c, e); refusal != "" {
				require.ErrorIs(t, err, jit.ErrExternal)
				assert.ErrorContains(t, err, refusal)
				assert.Nil(t, out)
				return
			}
			require.NoError(t, err)
			require.Len(t, out, 1)
			defer out[0].Close()
			got, err := out[0].ToHost()
			require.NoError(t, err)
			assert.Equal(t, p.Outputs[0].Values, got)
			assert.Equal(t, p.Outputs[0].Shape, out[0].Shape())
			assert.True(t, out[0].Sharding().Equal(sharding(t, m, tc.resultSh)), "result sharding %v", out[0].Sharding())
		})
	}
}

// TestFromExported012PlatformsCPUOnly refuses an artifact whose platforms do not include the
// client's, naming them: as exported on 8 devices, re-sharded onto the mesh there is on fewer.
// CPU only: the artifact's platforms include cuda.
func TestFromExported012PlatformsCPUOnly(t *testing.T) {
	c := pjrttest.Client(t)
	e, p := export012(t, "times2_cuda_tpu")
	m24 := fitMesh(t, jit.Devices(c), []int{2, 4}, "X", "Y")
	var opts []jit.Option
	if m24.Size() < 8 {
		opts = append(opts, jit.InSpecs(mesh.P("X", "Y")))
	}
	f, err := jit.FromExported(e, opts...)
	require.NoError(t, err)
	defer f.Close()
	x, err := jit.Put(c, p.Inputs[0].Values, p.Inputs[0].Shape, sharding(t, m24, mesh.P("X", "Y")))
	require.NoError(t, err)
	defer x.Close()
	_, err = f.Call(c, x)
	require.ErrorIs(t, err, jit.ErrExternal)
	assert.Contains(t, err.Error(), "the module was exported for [cuda tpu], the client runs cpu")
}

// TestFromTextExport012 runs the text JAX 0.12 lowered (Exported.mlir_module(): sdy.mesh with
// its {stablehlo.mesh = ...} dictionary, mesh-axes replica groups) as written and re-sharded.
// As written, and shard_map_psum re-sharded (its body is typed for the 2x4 mesh), need 8
// devices; times2_2x4 re-sharded runs on a 2x4 mesh as fitShape makes it.
func TestFromTextExport012(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	data, err := os.ReadFile(filepath.Join("..", "testdata", "oracle", "export012.json"))
	require.NoError(t, err)
	var f struct {
		Programs []struct {
			program012
			StableHLO string
		}
	}
	require.NoError(t, json.Unmarshal(data, &f))
	for _, p := range f.Programs {
		if p.Name != "times2_2x4" && p.Name != "shard_map_psum" {
			continue
		}
		for _, tc := range []struct {
			name    string
			reshard []jit.Option
		}{{"as written", nil}, {"resharded", []jit.Option{jit.InSpecs(mesh.P("X", "Y"))}}} {
			t.Run(p.Name+"/"+tc.name, func(t *testing.T) {
				var m mesh.Mesh
				switch {
				case tc.reshard == nil:
					pjrttest.NeedDevices(t, 8) // the module's 2x4 mesh
					m = mesh012(t, c, "2x4")
				case p.Name == "shard_map_psum":
					pjrttest.NeedDevices(t, 8) // a body typed for the 2x4 mesh
					m = mesh012(t, c, "2x4 reversed")
				default:
					m = fitMeshReversed(t, jit.Devices(c), []int{2, 4}, "X", "Y")
				}
				fn, err := jit.FromText(p.Name, p.StableHLO, tc.reshard...)
				require.NoError(t, err)
				defer fn.Close()
				x, err := jit.Put(c, p.Inputs[0].Values, p.Inputs[0].Shape, sharding(t, m, mesh.P("X", "Y")))
				require.NoError(t, err)
				defer x.Close()
				out, err := fn.Call(c, x)
				require.NoError(t, err)
				defer out[0].Close()
				got, err := out[0].ToHost()
				require.NoError(t, err)
				assert.Equal(t, p.Outputs[0].Values, got)
			})
		}
	}
}

// TestFromExported012PinnedHost runs JAX 0.12's artifact whose result is in pinned host memory
// (an annotate_device_placement custom call and mhlo.memory_kind = "pinned_host" on the result):
// a plugin of PJRT API 0.115 or newer runs it to JAX's values; on the API 0.81 CPU plugin, which
// refuses the placement call ("Side-effect ops cannot be replicated"), pjrt refuses the program
// before the plugin sees it (pjrt.MemorySpacesMinor), a typed ErrCompile and ErrUnimplemented.
// This is the evidence docs/plugins.md gives for the default CPU plugin.
func TestFromExported012PinnedHost(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	pjrttest.NeedDevices(t, 8) // the artifact's 2x4 mesh
	m := mesh012(t, c, "2x4")
	e, p := export012(t, "times2_to_pinned_host")
	f, err := jit.FromExported(e)
	require.NoError(t, err)
	defer f.Close()
	x, err := jit.Put(c, p.Inputs[0].Values, p.Inputs[0].Shape, sharding(t, m, mesh.P("X", "Y")))
	require.NoError(t, err)
	defer x.Close()
	out, err := f.Call(c, x)
	if _, minor := c.Plugin().APIVersion(); minor < 115 {
		require.ErrorIs(t, err, pjrt.ErrCompile)
		require.ErrorIs(t, err, pjrt.ErrUnimplemented)
		assert.ErrorContains(t, err, "annotate_device_placement")
		return
	}
	require.NoError(t, err)
	require.Len(t, out, 1)
	defer out[0].Close()
	got, err := out[0].ToHost()
	require.NoError(t, err)
	assert.Equal(t, p.Outputs[0].Values, got)
}
