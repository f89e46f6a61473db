package bytecode

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/mlir"
)

// TestArtifactsPassCheck: pjrt.Client.Compile reads bytecode as text and checks that text
// before compiling it, so every real artifact of the oracle (bytecode.json, programs.json and
// export012.json, JAX 0.12's, and the frozen bytecode081.json and programs081.json, JAX
// 0.8.1's) must read and pass mlir.Check for its own device count: a valid artifact compiles
// as before.
func TestArtifactsPassCheck(t *testing.T) {
	n := 0
	for _, file := range []string{"bytecode.json", "programs.json", "export012.json", "bytecode081.json", "programs081.json"} {
		raw, err := os.ReadFile("../../testdata/oracle/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var f struct {
			Programs []struct{ Name, Exported string }
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Programs {
			if p.Exported == "" {
				continue
			}
			b, err := base64.StdEncoding.DecodeString(p.Exported)
			if err != nil {
				t.Fatal(err)
			}
			e, err := jaxexport.Read(b)
			if err != nil {
				t.Fatalf("%s/%s: %v", file, p.Name, err)
			}
			text, err := ToText(e.Module())
			if err != nil {
				t.Errorf("%s/%s: %v", file, p.Name, err)
				continue
			}
			if err := mlir.Check(text, mlir.Partitions(e.NrDevices())); err != nil {
				t.Errorf("%s/%s: %v", file, p.Name, err)
			}
			n++
		}
	}
	if n < 50 {
		t.Errorf("%d artifacts; the oracle has 56", n)
	}
}

// TestExport012Attributes reads the attributes JAX 0.12 writes into its v12 artifacts: the
// mesh-axes replica groups of a shard_map psum and the platform-index argument.
func TestExport012Attributes(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/oracle/export012.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Programs []struct{ Name, Exported string }
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"shard_map_psum":  `replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_0, axes = [#stablehlo.axis_ref<name = "Y">]>, use_global_device_ids}`,
		"times2_cpu_cuda": `@main(%arg0: tensor<i32> {jax.global_constant = "_platform_index"}, %arg1: tensor<8x4xf32>`,
	}
	for _, p := range f.Programs {
		w, ok := want[p.Name]
		if !ok {
			continue
		}
		delete(want, p.Name)
		b, err := base64.StdEncoding.DecodeString(p.Exported)
		if err != nil {
			t.Fatal(err)
		}
		e, err := jaxexport.Read(b)
		if err != nil {
			t.Fatal(err)
		}
		text, err := ToText(e.Module())
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if !strings.Contains(text, w) {
			t.Errorf("%s: text lacks %s:\n%s", p.Name, w, text)
		}
	}
	if len(want) > 0 {
		t.Errorf("programs missing from export012.json: %v", want)
	}
}
