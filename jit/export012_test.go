package jit_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mesh"
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

// TestFromExported012 runs JAX 0.12's version 12 artifacts (named shardings on a 2x4 ("X", "Y")
// mesh) as exported and re-sharded, and compares with JAX's results.
func TestFromExported012(t *testing.T) {
	c := pjrttest.Client(t)
	checkNoLeak(t)
	devs := jit.Devices(c)[:8]
	m24, err := mesh.New(devs, []int{2, 4}, "X", "Y")
	require.NoError(t, err)
	rev := slices.Clone(devs)
	slices.Reverse(rev)
	m42, err := mesh.New(rev, []int{4, 2}, "X", "Y")
	require.NoError(t, err)
	m24rev, err := mesh.New(rev, []int{2, 4}, "X", "Y")
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		reshard  []jit.Option
		m        mesh.Mesh
		in       mesh.PartitionSpec
		resultSh mesh.PartitionSpec // the sharding of the result, on m
	}{
		{"times2_2x4", nil, m24, mesh.P("X", "Y"), mesh.P("X", "Y")},
		{"times2_2x4", []jit.Option{jit.InSpecs(mesh.P("Y", "X")), jit.OutSpecs(mesh.P("Y"))}, m42, mesh.P("Y", "X"), mesh.P("Y")},
		{"shard_map_psum", nil, m24, mesh.P("X", "Y"), mesh.P("X", nil)},
		{"shard_map_psum", []jit.Option{jit.InSpecs(mesh.P("X", "Y")), jit.OutSpecs(mesh.P("X", nil))}, m24rev, mesh.P("X", "Y"), mesh.P("X", nil)},
		{"times2_cpu_cuda", nil, m24, mesh.P("X", "Y"), mesh.P("X", "Y")},
		{"times2_cuda_nocheck", nil, m24, mesh.P("X", "Y"), mesh.P("X", "Y")}, // platform check disabled at export
		{"times2_cpu_cuda", []jit.Option{jit.InSpecs(mesh.P("Y", "X")), jit.OutSpecs(mesh.P("Y"))}, m42, mesh.P("Y", "X"), mesh.P("Y")},
	} {
		name := tc.name
		if tc.reshard != nil {
			name += "/resharded"
		}
		t.Run(name, func(t *testing.T) {
			e, p := export012(t, tc.name)
			f, err := jit.FromExported(e, tc.reshard...)
			require.NoError(t, err)
			defer f.Close()
			x, err := jit.Put(c, p.Inputs[0].Values, p.Inputs[0].Shape, sharding(t, tc.m, tc.in))
			require.NoError(t, err)
			defer x.Close()
			out, err := f.Call(c, x)
			require.NoError(t, err)
			require.Len(t, out, 1)
			defer out[0].Close()
			got, err := out[0].ToHost()
			require.NoError(t, err)
			assert.Equal(t, p.Outputs[0].Values, got)
			assert.Equal(t, p.Outputs[0].Shape, out[0].Shape())
			assert.True(t, out[0].Sharding().Equal(sharding(t, tc.m, tc.resultSh)), "result sharding %v", out[0].Sharding())
		})
	}
}

// TestFromExported012Platforms refuses an artifact whose platforms do not include the client's,
// naming them.
func TestFromExported012Platforms(t *testing.T) {
	c := pjrttest.Client(t)
	e, p := export012(t, "times2_cuda_tpu")
	f, err := jit.FromExported(e)
	require.NoError(t, err)
	defer f.Close()
	m24, err := mesh.New(jit.Devices(c)[:8], []int{2, 4}, "X", "Y")
	require.NoError(t, err)
	x, err := jit.Put(c, p.Inputs[0].Values, p.Inputs[0].Shape, sharding(t, m24, mesh.P("X", "Y")))
	require.NoError(t, err)
	defer x.Close()
	_, err = f.Call(c, x)
	require.ErrorIs(t, err, jit.ErrExternal)
	assert.Contains(t, err.Error(), "the module was exported for [cuda tpu], the client runs cpu")
}

// TestFromTextExport012 runs the text JAX 0.12 lowered (Exported.mlir_module(): sdy.mesh with
// its {stablehlo.mesh = ...} dictionary, mesh-axes replica groups) as written and re-sharded.
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
	devs := jit.Devices(c)[:8]
	rev := slices.Clone(devs)
	slices.Reverse(rev)
	m24, err := mesh.New(devs, []int{2, 4}, "X", "Y")
	require.NoError(t, err)
	m24rev, err := mesh.New(rev, []int{2, 4}, "X", "Y")
	require.NoError(t, err)
	for _, p := range f.Programs {
		if p.Name != "times2_2x4" && p.Name != "shard_map_psum" {
			continue
		}
		for _, tc := range []struct {
			name    string
			m       mesh.Mesh
			reshard []jit.Option
		}{{"as written", m24, nil}, {"resharded", m24rev, []jit.Option{jit.InSpecs(mesh.P("X", "Y"))}}} {
			t.Run(p.Name+"/"+tc.name, func(t *testing.T) {
				fn, err := jit.FromText(p.Name, p.StableHLO, tc.reshard...)
				require.NoError(t, err)
				defer fn.Close()
				x, err := jit.Put(c, p.Inputs[0].Values, p.Inputs[0].Shape, sharding(t, tc.m, mesh.P("X", "Y")))
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
