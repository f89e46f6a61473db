package bytecode

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/xlamesh/xlamesh/mlir"
)

// backCompatArtifact is one module of testdata/oracle/backcompat.json: JAX's own export
// backward-compatibility test data (tools/oracle/backcompat.py).
type backCompatArtifact struct {
	Name              string   `json:"name"`
	Platform          string   `json:"platform"`
	BytecodeVersion   int      `json:"bytecode_version"`
	NrDevices         int      `json:"nr_devices"`
	CustomCallTargets []string `json:"custom_call_targets"`
	Module            string   `json:"module"`
	Text              string   `json:"text"`
}

func loadBackCompat(t *testing.T) []backCompatArtifact {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/oracle/backcompat.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Artifacts []backCompatArtifact `json:"artifacts"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	return f.Artifacts
}

// mainSignature returns the types of @main's arguments and results in a module's text, in
// order ("tensor<2x4xf32>", ...), without their attributes.
var mainLine = regexp.MustCompile(`(?m)^\s*func\.func public @main\((.*)$`)
var tensorType = regexp.MustCompile(`tensor<[^<>]*(?:<[^<>]*>)?[^<>]*>`)

func mainSignature(text string) []string {
	m := mainLine.FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	return tensorType.FindAllString(m[1], -1)
}

// TestBackCompatRead reads every module of JAX's export backward-compatibility data, MLIR
// bytecode versions 0, 1 and 6 written from 2023 on, to text that mlir.Check accepts for the
// module's device count, with @main's argument and result types as JAX's own text of the
// module has them. Before version 5, bytecode had no properties: a function's sym_name and
// function_type, a comparison's direction, live in the op's attribute dictionary.
func TestBackCompatRead(t *testing.T) {
	arts := loadBackCompat(t)
	versions := map[int]int{}
	for _, a := range arts {
		t.Run(a.Name, func(t *testing.T) {
			b, err := base64.StdEncoding.DecodeString(a.Module)
			if err != nil {
				t.Fatal(err)
			}
			info, err := ReadInfo(b)
			if err != nil {
				t.Fatal(err)
			}
			if int(info.Version) != a.BytecodeVersion {
				t.Errorf("version %d, the generator read %d", info.Version, a.BytecodeVersion)
			}
			versions[a.BytecodeVersion]++
			text, err := ToText(b)
			if err != nil {
				t.Fatal(err)
			}
			if err := mlir.Check(text, mlir.Partitions(max(1, a.NrDevices))); err != nil {
				t.Errorf("%v\n%s", err, text)
			}
			got, want := mainSignature(text), mainSignature(a.Text)
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("@main: %v, JAX's text has %v", got, want)
			}
		})
	}
	for _, v := range []int{0, 1, 6} {
		if versions[v] == 0 {
			t.Errorf("no artifact of bytecode version %d (of %v)", v, versions)
		}
	}
}
