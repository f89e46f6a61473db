package lower_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/lower"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenPath returns the golden file of a case for a partitioner.
func goldenPath(name string, p lower.Partitioner) string {
	if p == lower.GSPMD {
		return filepath.Join("testdata", "golden", name+".gspmd.mlir")
	}
	return filepath.Join("testdata", "golden", name+".mlir")
}

func partitioners(c goldenCase) []lower.Partitioner {
	if c.gspmd {
		return []lower.Partitioner{lower.Shardy, lower.GSPMD}
	}
	return []lower.Partitioner{lower.Shardy}
}

// TestGolden compares every case's module text with its golden file (go test -update rewrites them).
func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		for _, p := range partitioners(c) {
			t.Run(c.name+"/"+p.String(), func(t *testing.T) {
				prog, err := build(c, p)
				require.NoError(t, err)
				path := goldenPath(c.name, p)
				if *update {
					require.NoError(t, os.WriteFile(path, []byte(prog.Text()), 0o644))
				}
				want, err := os.ReadFile(path)
				require.NoError(t, err)
				require.Equal(t, string(want), prog.Text())
				// One partitioner's syntax per module, never both.
				if p == lower.GSPMD {
					require.NotContains(t, prog.Text(), "sdy.")
				} else {
					require.NotContains(t, prog.Text(), "mhlo.sharding")
				}
				// Building again gives byte-identical text.
				again, err := build(c, p)
				require.NoError(t, err)
				require.Equal(t, prog.Text(), again.Text())
			})
		}
	}
}
