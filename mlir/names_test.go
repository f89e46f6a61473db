package mlir_test

import (
	"testing"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/mlir"
)

// TestMeshNameRuleAgrees: package mesh applies CheckName's rule when a mesh is built. It
// imports no other package, so it keeps its own copy; this test fails if the two disagree
// on any byte, alone or between other characters.
func TestMeshNameRuleAgrees(t *testing.T) {
	for c := range 256 {
		for _, name := range []string{string([]byte{byte(c)}), "ok" + string([]byte{byte(c)}) + "ok"} {
			_, meshErr := mesh.NewAbstract([]int{1}, []string{name})
			if (meshErr == nil) != (mlir.CheckName("axis", name) == nil) {
				t.Errorf("%q: mesh says %v, mlir says %v", name, meshErr, mlir.CheckName("axis", name))
			}
		}
	}
}
