package jit

import (
	"fmt"
	"slices"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
)

// chosenSpec returns the partition spec XLA chose for result i, which was left unconstrained.
// A result whose shard shape is its global shape is replicated.
func chosenSpec(exe *pjrt.Executable, m mesh.Mesh, i int, global, shard []int) (mesh.PartitionSpec, error) {
	if slices.Equal(global, shard) {
		return mesh.P(), nil
	}
	return mesh.PartitionSpec{}, fmt.Errorf("%w: XLA sharded the unconstrained result (shard shape %v of %v) and its layout cannot be read back; declare it with OutSpecs",
		ErrLowering, shard, global)
}
