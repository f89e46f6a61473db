package jaxexport

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// corpus012 returns the artifacts JAX 0.12.0.1 wrote (testdata/oracle/export012.json, by
// tools/oracle/export012.sh), by program name.
func corpus012(t testing.TB) map[string][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "oracle", "export012.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		JaxVersion string `json:"jax_version"`
		Programs   []struct{ Name, Exported string }
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if f.JaxVersion != "0.12.0.1" {
		t.Fatalf("export012.json written by JAX %s", f.JaxVersion)
	}
	out := map[string][]byte{}
	for _, p := range f.Programs {
		if out[p.Name], err = base64.StdEncoding.DecodeString(p.Exported); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestReadExport012 reads the serialization version 12 artifacts of JAX 0.12: named shardings
// over a shared 2x4 abstract mesh, avals and shardings by index, the JAX version, and the
// platforms of multi-platform exports.
func TestReadExport012(t *testing.T) {
	arts := corpus012(t)
	for _, tc := range []struct {
		name      string
		platforms []string
		in, out   string // String() of the first in and out sharding
	}{
		{"times2_2x4", []string{"cpu"}, "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto)), spec=P('X', 'Y'))", "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto)), spec=P('X', 'Y'))"},
		{"shard_map_psum", []string{"cpu"}, "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto)), spec=P('X', 'Y'))", "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto)), spec=P('X', None))"},
		{"times2_cpu_cuda", []string{"cpu", "cuda"}, "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto)), spec=P('X', 'Y'))", "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto)), spec=P('X', 'Y'))"},
		{"times2_cuda_nocheck", []string{"cuda"}, "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto)), spec=P('X', 'Y'))", "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto)), spec=P('X', 'Y'))"},
		{"times2_cuda_tpu", []string{"cuda", "tpu"}, "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto)), spec=P('X', 'Y'))", "NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types=(Auto, Auto)), spec=P('X', 'Y'))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, ok := arts[tc.name]
			if !ok {
				t.Fatalf("no program %s in export012.json", tc.name)
			}
			e, err := Read(b)
			if err != nil {
				t.Fatal(err)
			}
			if e.SerializationVersion() != 12 || e.JaxVersion() != "0.12.0.1" || e.NrDevices() != 8 ||
				!slices.Equal(e.Platforms(), tc.platforms) || len(e.InAvals()) != 1 || e.InAvals()[0].Aval() != "f32[8,4]" ||
				!slices.Equal(e.InMemorySpaces(), []string{"device"}) || string(e.Module()[:4]) != "ML\xefR" {
				t.Errorf("read %v: version %d, JAX %q, platforms %v, memory %v", e, e.SerializationVersion(), e.JaxVersion(),
					e.Platforms(), e.InMemorySpaces())
			}
			if checks := e.DisabledChecks(); tc.name == "times2_cuda_nocheck" != slices.Equal(checks, []string{"platform"}) {
				t.Errorf("DisabledChecks() = %v", checks)
			}
			in, out := e.InShardings()[0], e.OutShardings()[0]
			if in.String() != tc.in || out.String() != tc.out || in.HLO() != "" {
				t.Errorf("shardings %q, %q; want %q, %q", in, out, tc.in, tc.out)
			}
			if ns, ok := in.Named(); !ok || ns.Abstract().Size() != 8 {
				t.Errorf("Named() = %v, %v", ns, ok)
			}
		})
	}
}

// TestReadExport012Truncated reads every prefix of a version 12 artifact: never a panic, every
// error an *Error.
func TestReadExport012Truncated(t *testing.T) {
	b := corpus012(t)["shard_map_psum"]
	for n := range len(b) {
		if _, err := Read(b[:n]); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("prefix %d: %v is not an *Error", n, err)
			}
		}
	}
}
