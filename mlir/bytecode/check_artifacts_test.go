package bytecode

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"

	"github.com/xlamesh/xlamesh/jaxexport"
	"github.com/xlamesh/xlamesh/mlir"
)

// TestArtifactsPassCheck: pjrt.Client.Compile reads bytecode as text and checks that text
// before compiling it, so every real artifact of the oracle (bytecode.json and programs.json)
// must read and pass mlir.Check for its own device count: a valid artifact compiles as before.
func TestArtifactsPassCheck(t *testing.T) {
	n := 0
	for _, file := range []string{"bytecode.json", "programs.json"} {
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
