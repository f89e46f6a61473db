package lower_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xlamesh/xlamesh/mlir"
)

// TestCheckBuiltModules: every golden module passes the module checker.
func TestCheckBuiltModules(t *testing.T) {
	for _, gc := range goldenCases {
		for _, p := range partitioners(gc) {
			prog, err := build(gc, p)
			require.NoError(t, err)
			require.NoError(t, mlir.Check(prog.Text(), mlir.Partitions(prog.NumPartitions())), "%s/%s", gc.name, p)
		}
	}
}
