package lower_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/xlamesh/xlamesh/mlir"
)

// TestGoldensPassTheChecker: every module of the golden files, which is what lower writes in
// Shardy and GSPMD mode (shard_maps included), passes mlir.Check, as Compile runs it.
func TestGoldensPassTheChecker(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.mlir"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files in testdata/golden")
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := mlir.Check(string(text)); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
}
