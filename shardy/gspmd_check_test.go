package shardy

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xlamesh/xlamesh/mlir"
)

// TestGSPMDTextsParse: every HloSharding text XLA itself exported (testdata/gspmd_xla.json)
// and every text GSPMD prints for those cases is one mlir.CheckSharding, the reader behind
// the module checker, accepts for the mesh's device count.
func TestGSPMDTextsParse(t *testing.T) {
	b, err := os.ReadFile("testdata/gspmd_xla.json")
	require.NoError(t, err)
	var data struct {
		Cases []struct{ Mesh, Sharding, Want string }
	}
	require.NoError(t, json.Unmarshal(b, &data))
	require.NotEmpty(t, data.Cases)
	for i, c := range data.Cases {
		m, err := ParseMesh(c.Mesh)
		require.NoError(t, err, "case %d", i)
		partitions := m.Size()
		if m.IsMaximal() {
			partitions = 0 // the device id counts among the module's partitions, not the mesh's
		}
		require.NoError(t, mlir.CheckSharding(c.Want, partitions), "case %d: XLA's %s", i, c.Want)
		s, err := ParseTensorSharding(c.Sharding)
		require.NoError(t, err, "case %d", i)
		got, err := s.GSPMD(m)
		require.NoError(t, err, "case %d", i)
		require.NoError(t, mlir.CheckSharding(got, partitions), "case %d: %s", i, got)
	}
}
