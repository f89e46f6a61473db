package stablehlo_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/mlir"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// TestGolden compares every case's module text with its golden file (go test -update
// rewrites them); building again gives the same bytes, and the module checker accepts it.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			text, err := build(c)
			require.NoError(t, err)
			path := filepath.Join("testdata", "golden", c.name+".mlir")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			require.Equal(t, string(want), text)
			again, err := build(c)
			require.NoError(t, err)
			require.Equal(t, text, again)
			require.NoError(t, mlir.Check(text, mlir.Partitions(1)))
		})
	}
}
