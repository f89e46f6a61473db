package jit

import (
	"fmt"
	"slices"

	"github.com/xlamesh/xlamesh/mesh"
	"github.com/xlamesh/xlamesh/pjrt"
	"github.com/xlamesh/xlamesh/shardy"
)

// chosenSpec returns the partition spec of the layout XLA chose for result i, which was left
// unconstrained: the result's HloSharding, read from the optimized program, converted to a
// spec over m's axes by shardy.FromGSPMD.
func chosenSpec(exe *pjrt.Executable, m mesh.Mesh, i int, global, shard []int) (mesh.PartitionSpec, error) {
	if slices.Equal(global, shard) {
		return mesh.P(), nil
	}
	shardings, err := exe.OutputShardings()
	if err != nil {
		return mesh.PartitionSpec{}, err
	}
	if i >= len(shardings) {
		return mesh.PartitionSpec{}, fmt.Errorf("%w: XLA reported %d output shardings", ErrLowering, len(shardings))
	}
	spec, err := shardy.FromGSPMD(m.Abstract(), shardings[i], len(global))
	if err != nil {
		return mesh.PartitionSpec{}, fmt.Errorf("%w: XLA's layout of the unconstrained result is not a PartitionSpec over %s; declare it with OutSpecs: %w",
			ErrLowering, m, err)
	}
	return spec, nil
}

// layoutSpec returns the partition spec over m's axes of an HloSharding of an array of shape
// global (shardy.FromGSPMD); on a mesh of one device every sharding is P().
func layoutSpec(op pjrt.OpSharding, m mesh.Mesh, global []int) (mesh.PartitionSpec, error) {
	if m.Size() == 1 {
		return mesh.P(), nil
	}
	spec, err := shardy.FromGSPMD(m.Abstract(), op, len(global))
	if err != nil {
		return mesh.PartitionSpec{}, fmt.Errorf("%w: the layout is not a PartitionSpec over %s: %w", ErrLowering, m, err)
	}
	return spec, nil
}
