package oracletest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/xlamesh/xlamesh/jit"
	"github.com/xlamesh/xlamesh/mlir/bytecode"
	"github.com/xlamesh/xlamesh/pjrt/pjrttest"
)

// TestBytecodeVersions runs every artifact of testdata/oracle/bytecode_versions.json
// (tools/oracle/bytecode_versions.py): JAX programs serialized by JAX's StableHLO for old and new
// targets, in every MLIR bytecode version a portable artifact is written in (0, 1, 3, 4 and 6;
// none is written in 2 or 5). Each is read by mlir/bytecode and run through jit.FromBytecode on
// one device; its outputs are compared with JAX's as in the programs corpus.
func TestBytecodeVersions(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(goldenDir, "bytecode_versions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		JAXVersion string `json:"jax_version"`
		Programs   []struct {
			Name      string      `json:"name"`
			About     string      `json:"about"`
			Inputs    []arrayJSON `json:"inputs"`
			Outputs   []arrayJSON `json:"outputs"`
			Artifacts []struct {
				Target          string `json:"target"`
				BytecodeVersion int    `json:"bytecode_version"`
				Module          string `json:"module"`
			} `json:"artifacts"`
		} `json:"programs"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	c := pjrttest.Client(t)
	report.noteGroup("bytecode_versions", fmt.Sprintf("JAX programs (jax %s) serialized by JAX's StableHLO for old and new targets, "+
		"one artifact per MLIR bytecode version a portable artifact is written in (`testdata/oracle/bytecode_versions.json`), "+
		"read by `mlir/bytecode` and run through `jit.FromBytecode` on one device; outputs compared with JAX's.", f.JAXVersion))
	one := programMesh{Shape: []int{1}, Axes: []string{"x"}, DeviceIDs: []int{c.Devices()[0].ID()}}
	versions := map[int]bool{}
	for _, p := range f.Programs {
		report.aboutProgram(p.Name, p.About, "one device")
		specs := make([][]any, len(p.Inputs))
		for i := range specs {
			specs[i] = []any{}
		}
		for _, a := range p.Artifacts {
			t.Run(fmt.Sprintf("%s/v%d", p.Name, a.BytecodeVersion), func(t *testing.T) {
				b, err := base64.StdEncoding.DecodeString(a.Module)
				if err != nil {
					t.Fatal(err)
				}
				info, err := bytecode.ReadInfo(b)
				if err != nil || int(info.Version) != a.BytecodeVersion {
					t.Fatalf("bytecode version %d (%v), the generator wrote %d", info.Version, err, a.BytecodeVersion)
				}
				fn, err := jit.FromBytecode(p.Name, b)
				var diffs []string
				if err != nil {
					diffs = []string{err.Error()}
				} else {
					defer fn.Close()
					diffs, _ = runProgram(t, c, fn, one, specs, p.Inputs, p.Outputs)
				}
				report.check(t, "bytecode_versions", fmt.Sprintf("%s/bytecode v%d (StableHLO %s)", p.Name, a.BytecodeVersion, a.Target), diffs)
				if len(diffs) == 0 {
					versions[a.BytecodeVersion] = true
				}
			})
		}
	}
	for _, v := range []int{0, 1, 3, 4, 6} {
		if !versions[v] {
			t.Errorf("no artifact of bytecode version %d ran", v)
		}
	}
}
